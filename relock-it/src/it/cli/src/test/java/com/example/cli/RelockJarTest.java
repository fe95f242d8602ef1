package com.example.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code java -jar relock.jar inspect order:42 --redis URI}, as docs/operations.md shows it: exit code 3
 * while the lock is free, 0 and the holder while a client holds it.
 */
class RelockJarTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private record Run(int exitCode, String output) {
    }

    @Test
    void inspectExitsWith3ForAFreeLockAnd0ForAHeldOne(RedisServer server) throws Exception {
        Run free = relockJar("inspect", "order:42", "--redis", server.uri());
        assertThat(free.exitCode()).as(free.output()).isEqualTo(3);

        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            DistributedLock lock = relock.getLock("order:42");
            lock.lock();
            try {
                Run held = relockJar("inspect", "order:42", "--redis", server.uri());
                assertThat(held.exitCode()).as(held.output()).isZero();
                assertThat(held.output()).contains("order:42").contains("locked").contains("reentrant")
                        .contains(relock.clientId());
            } finally {
                lock.unlock();
            }
        }
    }

    private static Run relockJar(String... args) throws IOException, InterruptedException {
        Path jar = Path.of(System.getProperty("relock.cli.jar"));
        assertThat(jar).as("relock.jar from the main build").isRegularFile();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", jar.toString()));
        command.addAll(List.of(args));
        Path output = Files.createTempFile("relock-cli", ".out");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                    .start();
            process.getOutputStream().close();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("relock.jar did not finish within 60 s: " + command);
            }
            return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
