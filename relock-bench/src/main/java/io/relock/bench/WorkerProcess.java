package io.relock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One worker JVM: the same {@code java}, the same flags and the same classpath for every
 * library, so that only the library differs. Its results are read as they come; a worker that
 * runs past its time limit gets a thread dump taken (jcmd) and is killed, and the dump is part
 * of the error.
 */
final class WorkerProcess {

    /** Enough for the head of an exception with its causes, not only the bottom of its stack. */
    private static final int STDERR_LINES_SHOWN = 120;

    /** A worker's output. */
    record Output(List<Map<String, Object>> results, boolean done, int exitCode, String stderr, String problem) {}

    private WorkerProcess() {
    }

    /** The JVM flags of every worker, whatever the library. */
    private static List<String> jvmFlags(String heap) {
        return List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-Djava.awt.headless=true");
    }

    /**
     * The command line of a bench JVM: this JVM's {@code java} and classpath, the workers' flags,
     * {@code main} and its arguments. S3 starts its waiter in another JVM with the same.
     */
    static List<String> command(Class<?> main, String heap, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags(heap));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(args);
        return command;
    }

    /**
     * Runs {@code Worker} with {@code args}, handing each result to {@code onResult} as it
     * arrives, and returns when the worker has exited (or was killed after {@code limit}).
     */
    static Output run(List<String> workerArgs, String heap, Duration limit, Consumer<Map<String, Object>> onResult) {
        List<String> command = command(Worker.class, heap, workerArgs);

        Path stderrFile;
        Process process;
        try {
            stderrFile = Files.createTempFile("relock-bench-worker-", ".err");
            process = new ProcessBuilder(command).redirectError(stderrFile.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a worker JVM: " + command, e);
        }
        Thread killer = new Thread(process::destroyForcibly, "bench-kill-worker");
        Runtime.getRuntime().addShutdownHook(killer);
        // stdin stays open and silent: the worker exits when it closes, i.e. when we are gone.
        Deadline deadline = new Deadline(process, limit);
        deadline.start();

        List<Map<String, Object>> results = new ArrayList<>();
        boolean done = false;
        String problem = null;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith(Worker.RESULT_PREFIX)) {
                    Map<String, Object> result = Json.object(Json.parse(line.substring(Worker.RESULT_PREFIX.length())));
                    results.add(result);
                    onResult.accept(result);
                } else if (line.equals(Worker.DONE)) {
                    done = true;
                }
            }
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException e) {
            problem = "reading the worker's output failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            problem = "interrupted";
        } finally {
            deadline.interrupt();
            try {
                process.getOutputStream().close();
            } catch (IOException ignored) {
                // the worker is gone either way
            }
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        }
        String stderr;
        try {
            stderr = Files.readString(stderrFile, StandardCharsets.UTF_8);
            Files.deleteIfExists(stderrFile);
        } catch (IOException e) {
            stderr = "(cannot read the worker's stderr: " + e + ")";
        }
        if (deadline.dump != null) {
            problem = "HANG: the worker ran past its limit of " + limit.toSeconds() + " s and was killed; "
                    + deadline.dump;
        } else if (!done && problem == null) {
            problem = "the worker ended without finishing (exit code " + exitCode(process) + ")";
        }
        return new Output(results, done, exitCode(process), stderr, problem);
    }

    /** The last lines of a worker's stderr, for the console. */
    static List<String> stderrTail(String stderr) {
        List<String> lines = stderr.lines().filter(line -> !line.isBlank()).toList();
        if (lines.size() <= STDERR_LINES_SHOWN) {
            return lines;
        }
        List<String> tail = new ArrayList<>(lines.subList(lines.size() - STDERR_LINES_SHOWN, lines.size()));
        tail.add(0, "… " + (lines.size() - STDERR_LINES_SHOWN) + " earlier lines");
        return tail;
    }

    private static int exitCode(Process process) {
        return process.isAlive() ? -1 : process.exitValue();
    }

    /** Kills the worker once its time is up, after asking the JVM for a thread dump. */
    private static final class Deadline extends Thread {

        private final Process process;
        private final Duration limit;
        private volatile String dump;

        Deadline(Process process, Duration limit) {
            super("bench-worker-deadline");
            setDaemon(true);
            this.process = process;
            this.limit = limit;
        }

        @Override
        public void run() {
            try {
                if (process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            dump = threadDump(process.pid());
            process.destroyForcibly();
        }

        private static String threadDump(long pid) {
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            if (!Files.isExecutable(jcmd)) {
                return "no jcmd to take a thread dump";
            }
            try {
                Path output = Files.createTempFile("relock-bench-dump-", ".txt");
                try {
                    Process dumper = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print")
                            .redirectErrorStream(true).redirectOutput(output.toFile()).start();
                    if (!dumper.waitFor(20, TimeUnit.SECONDS)) {
                        dumper.destroyForcibly();
                    }
                    return "thread dump:\n" + Files.readString(output, StandardCharsets.UTF_8);
                } finally {
                    Files.deleteIfExists(output);
                }
            } catch (IOException e) {
                return "thread dump failed: " + e;
            } catch (InterruptedException e) {
                return "thread dump interrupted";
            }
        }
    }
}
