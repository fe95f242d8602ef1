package io.relock.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the Maven that runs this build ({@code maven.home}) on another project, with this build's
 * local repository, its output in a log file. Releases and API checks are what it is for, so it
 * runs online: central-publishing-maven-plugin refuses offline mode.
 */
final class Maven {

    private static final Duration TIMEOUT = Duration.ofMinutes(15);

    private Maven() {
    }

    /** The outcome of one build: its exit code and its log. */
    record Build(List<String> command, int exitCode, Path log) {

        String output() throws IOException {
            return Files.readString(log);
        }

        /** Fails the test, with the log's last lines, unless the build passed. */
        Build passed() throws IOException {
            if (exitCode != 0) {
                fail("%s failed (exit %d); the end of its log (all of it in %s):%n%s",
                        String.join(" ", command), exitCode, log, tail());
            }
            return this;
        }

        /** Fails the test unless the build failed. */
        Build failed() throws IOException {
            assertThat(exitCode).as("exit code of %s; its log ends:%n%s", String.join(" ", command), tail())
                    .isNotZero();
            return this;
        }

        private String tail() throws IOException {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        }
    }

    /** Runs {@code mvn -f pom arguments...}; an empty value in {@code environment} unsets that variable. */
    static Build run(Path pom, Path log, Map<String, String> environment, List<String> arguments)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(property("relock.maven.home"), "bin", "mvn").toString(),
                "-B", "--no-transfer-progress", "-f", pom.toString(),
                "-Dmaven.repo.local=" + localRepository()));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(pom.getParent().toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        environment.forEach((name, value) -> {
            if (value.isEmpty()) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });

        Process build = builder.start();
        if (!build.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            build.descendants().forEach(ProcessHandle::destroyForcibly);
            build.destroyForcibly().waitFor();
            fail("%s took more than %s; its log: %s", String.join(" ", command), TIMEOUT, log);
        }
        return new Build(command, build.exitValue(), log);
    }

    static Path localRepository() {
        return Path.of(property("relock.maven.repo.local"));
    }

    static String property(String name) {
        String value = System.getProperty(name);
        assertThat(value).as("system property %s (set by the module's surefire configuration)", name)
                .isNotBlank();
        return value;
    }
}
