package io.relock.cli;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code relock} as its own process, as a user runs it: {@code java -cp <test classpath>
 * io.relock.cli.Main ...}, with stdin given, stdout and stderr kept apart, and the exit code.
 */
final class Cli {

    /** How long a condition only Redis can report (a waiter subscribed or queued) may take. */
    static final Duration PROMPTLY = Duration.ofSeconds(10);

    /** Generous: a cold JVM on a loaded 2-core machine. */
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(60);

    private Cli() {}

    /** What one run printed and returned. */
    record Result(int exitCode, String out, String err) {
        /** Everything printed, for "never printed" checks. */
        String all() {
            return out + err;
        }

        @Override
        public String toString() {
            return "exit code " + exitCode + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    static Result run(String... args) {
        return run("", Map.of(), args);
    }

    /**
     * Runs the command and waits for it to exit.
     *
     * @param stdin what is typed on stdin (then closed)
     * @param env environment variables to add; RELOCK_PASSWORD is removed unless given here
     */
    static Result run(String stdin, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(List.of(args));
        Path out = null;
        Path err = null;
        Process process = null;
        try {
            out = Files.createTempFile("relock-cli", ".out");
            err = Files.createTempFile("relock-cli", ".err");
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
            builder.environment().remove(ConnectionOptions.PASSWORD_VARIABLE);
            builder.environment().putAll(env);
            process = builder.start();
            try (OutputStream input = process.getOutputStream()) {
                input.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            if (!process.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                fail("relock " + String.join(" ", args) + " did not exit within " + EXIT_TIMEOUT + "; stdout so far:\n"
                        + Files.readString(out));
            }
            return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
            delete(out);
            delete(err);
        }
    }

    private static void delete(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a temp file left behind is harmless
            }
        }
    }
}
