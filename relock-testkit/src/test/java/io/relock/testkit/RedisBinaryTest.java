package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisBinaryTest {

    @Test
    void withoutVariableAndWithoutRedisOnPathUsesTheEmbeddedBinary() {
        assumeTrue(RedisBinary.embeddedResourceName(System.getProperty("os.name"), System.getProperty("os.arch")) != null,
                "embedded-redis ships a binary for this platform");

        RedisBinary binary = RedisBinary.locate(Map.of("PATH", "/nonexistent"));

        assertThat(binary.source()).isEqualTo("embedded-redis");
        assertThat(binary.path()).startsWith(Workspace.root().resolve("bin")).isExecutable();
        assertThat(binary.version()).matches("\\d+\\.\\d+\\.\\d+");
        try (RedisServer server = RedisServer.builder().binary(binary.path()).start()) {
            assertThat(server.command("PING")).isEqualTo("PONG");
            assertThat(server.version()).isEqualTo(binary.version());
        }
    }

    @Test
    void extractingTheEmbeddedBinaryAgainReusesIt() throws IOException {
        assumeTrue(RedisBinary.embeddedResourceName(System.getProperty("os.name"), System.getProperty("os.arch")) != null,
                "embedded-redis ships a binary for this platform");
        Path first = RedisBinary.locate(Map.of()).path();
        long modified = Files.getLastModifiedTime(first).toMillis();

        Path second = RedisBinary.locate(Map.of()).path();

        assertThat(second).isEqualTo(first);
        assertThat(Files.getLastModifiedTime(second).toMillis()).isEqualTo(modified);
    }

    @Test
    void findsRedisServerOnPath(@TempDir Path dir) throws IOException {
        Path wrapper = wrapper(dir.resolve("redis-server"), RedisBinary.locate().path());

        RedisBinary binary = RedisBinary.locate(Map.of("PATH", "/nonexistent::" + dir));

        assertThat(binary.source()).isEqualTo("PATH");
        assertThat(binary.path()).isEqualTo(wrapper);
        assertThat(binary.version()).isEqualTo(RedisBinary.locate().version());
    }

    @Test
    void variableWinsOverPath(@TempDir Path dir) throws IOException {
        Path real = RedisBinary.locate().path().toAbsolutePath();
        wrapper(dir.resolve("redis-server"), real);

        RedisBinary binary = RedisBinary.locate(Map.of("RELOCK_REDIS_SERVER", real.toString(), "PATH", dir.toString()));

        assertThat(binary.source()).isEqualTo("RELOCK_REDIS_SERVER");
        assertThat(binary.path()).isEqualTo(real);
    }

    @Test
    void variablePointingToAMissingFileFailsNamingTheVariable() {
        Map<String, String> env = Map.of("RELOCK_REDIS_SERVER", "/no/such/redis-server", "PATH", "/usr/bin:/bin");

        assertThatThrownBy(() -> RedisBinary.locate(env))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RELOCK_REDIS_SERVER")
                .hasMessageContaining("/no/such/redis-server");
    }

    @Test
    void variablePointingToSomethingElseThanRedisFailsWithItsOutput(@TempDir Path dir) throws IOException {
        Path fake = dir.resolve("fake-redis-server");
        Files.writeString(fake, "#!/bin/sh\necho 'not redis'\nexit 3\n");
        assertThat(fake.toFile().setExecutable(true, true)).isTrue();

        assertThatThrownBy(() -> RedisBinary.locate(Map.of("RELOCK_REDIS_SERVER", fake.toString())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RELOCK_REDIS_SERVER")
                .hasMessageContaining("exit code 3")
                .hasMessageContaining("not redis");
    }

    @Test
    void choosesTheEmbeddedResourceByOsAndArchitecture() {
        assertThat(RedisBinary.embeddedResourceName("Linux", "amd64")).isEqualTo("redis-server-6.2.6-v5-linux-amd64");
        assertThat(RedisBinary.embeddedResourceName("Linux", "aarch64")).isEqualTo("redis-server-6.2.7-linux-arm64");
        assertThat(RedisBinary.embeddedResourceName("Mac OS X", "x86_64")).isEqualTo("redis-server-6.2.6-v5-darwin-amd64");
        assertThat(RedisBinary.embeddedResourceName("Mac OS X", "aarch64")).isEqualTo("redis-server-6.2.6-v5-darwin-arm64");
        assertThat(RedisBinary.embeddedResourceName("Windows 11", "amd64")).isNull();
        assertThat(RedisBinary.embeddedResourceName("Linux", "ppc64le")).isNull();
    }

    /** A script that runs {@code target}; unlike a symbolic link, JUnit's @TempDir deletes it silently. */
    private static Path wrapper(Path script, Path target) throws IOException {
        Files.writeString(script, "#!/bin/sh\nexec '" + target.toAbsolutePath() + "' \"$@\"\n");
        assertThat(script.toFile().setExecutable(true, true)).isTrue();
        return script;
    }

    @Test
    void locateIsCachedForTheJvm() {
        assertThat(RedisBinary.locate()).isSameAs(RedisBinary.locate());
    }
}
