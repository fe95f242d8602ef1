package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    private RedisServer server;

    @BeforeEach
    void startServer() {
        server = RedisServer.start();
    }

    @AfterEach
    void stopServer() {
        server.stop();
    }

    @Test
    void startsOnAFreeLoopbackPortAndAnswersPing() {
        assertThat(server.host()).isEqualTo("127.0.0.1");
        assertThat(server.port()).isPositive().isNotEqualTo(6379);
        assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
        assertThat(server.isRunning()).isTrue();
        assertThat(server.isPaused()).isFalse();
        assertThat(ProcessAssertions.isAlive(server.pid())).isTrue();
        assertThat(server.version()).isEqualTo(RedisBinary.locate().version());
        assertThat(server.directory()).isDirectory();
        assertThat(server.directory().resolve("redis.log")).isRegularFile();
        assertThat(server.command("PING")).isEqualTo("PONG");
    }

    @Test
    void runsWithoutPersistence() {
        assertThat(server.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
        assertThat(server.command("CONFIG", "GET", "appendonly")).isEqualTo(List.of("appendonly", "no"));
        assertThat(server.command("CONFIG", "GET", "bind")).isEqualTo(List.of("bind", "127.0.0.1"));
    }

    @Test
    void commandReturnsStringsLongsListsAndNull() {
        assertThat(server.command("SET", "greeting", "grüezi")).isEqualTo("OK");
        assertThat(server.command("GET", "greeting")).isEqualTo("grüezi");
        assertThat(server.command("GET", "missing")).isNull();
        assertThat(server.command("INCR", "counter")).isEqualTo(1L);
        assertThat(server.command("RPUSH", "list", "a", "", "c")).isEqualTo(3L);
        assertThat(server.command("LRANGE", "list", "0", "-1")).isEqualTo(List.of("a", "", "c"));
        assertThat(server.command("LRANGE", "missing", "0", "-1")).isEqualTo(List.of());
        assertThat(server.command("EVAL", "return {1, 'two', {3, false}}", "0"))
                .isEqualTo(List.of(1L, "two", Arrays.asList(3L, null)));
        // A timed-out BLPOP replies with a null array.
        assertThat(server.command("BLPOP", "missing", "0.01")).isNull();
    }

    @Test
    void errorReplyThrowsCommandExceptionWithTheServersMessage() {
        server.command("SET", "string", "value");

        assertThatThrownBy(() -> server.command("NOSUCHCOMMAND", "x"))
                .isInstanceOf(RedisServer.CommandException.class)
                .hasMessageStartingWith("ERR unknown command");
        assertThatThrownBy(() -> server.command("LPUSH", "string", "x"))
                .isInstanceOf(RedisServer.CommandException.class)
                .hasMessageStartingWith("WRONGTYPE");
    }

    @Test
    void commandRejectsBadArguments() {
        assertThatThrownBy(() -> server.command()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("args");
        assertThatThrownBy(() -> server.command("GET", null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("args[1]");
        assertThatThrownBy(() -> server.command(Duration.ZERO, "PING")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeout");
    }

    @Test
    void infoAndFlushAll() {
        assertThat(server.info("server")).contains("redis_version:" + server.version())
                .contains("process_id:" + server.pid());
        server.command("SET", "k", "v");

        server.flushAll();

        assertThat(server.command("DBSIZE")).isEqualTo(0L);
    }

    @Test
    void killEndsTheProcessAndThePortRefusesConnections() {
        long pid = server.pid();

        server.kill();

        assertThat(server.isRunning()).isFalse();
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
        assertThatThrownBy(() -> server.command("PING"))
                .isInstanceOf(UncheckedIOException.class)
                .hasCauseInstanceOf(ConnectException.class);
        server.kill();
    }

    @Test
    void restartComesBackOnTheSamePortWithoutData() {
        int port = server.port();
        long pid = server.pid();
        server.command("SET", "k", "v");

        server.restart();

        assertThat(server.port()).isEqualTo(port);
        assertThat(server.pid()).isNotEqualTo(pid);
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
        assertThat(server.command("PING")).isEqualTo("PONG");
        assertThat(server.command("GET", "k")).isNull();
    }

    @Test
    void restartAfterKillAndAfterStopBringsTheServerBack() {
        server.kill();
        server.restart();
        assertThat(server.command("PING")).isEqualTo("PONG");

        server.stop();
        server.restart();

        assertThat(server.command("PING")).isEqualTo("PONG");
        assertThat(server.directory()).isDirectory();
    }

    @Test
    void pausedServerDoesNotAnswerUntilResumed() {
        server.pause();

        assertThat(server.isPaused()).isTrue();
        assertThat(server.isRunning()).isTrue();
        assertThatThrownBy(() -> server.command(Duration.ofMillis(200), "PING"))
                .isInstanceOf(UncheckedIOException.class)
                .hasCauseInstanceOf(SocketTimeoutException.class);

        server.resume();

        assertThat(server.isPaused()).isFalse();
        assertThat(server.command("PING")).isEqualTo("PONG");
    }

    @Test
    void pausedServerCanBeStoppedAndKilled() {
        server.pause();
        server.stop();
        assertThat(server.isRunning()).isFalse();

        server.restart();
        server.pause();
        server.kill();
        assertThat(server.isRunning()).isFalse();
        assertThat(server.isPaused()).isFalse();
    }

    @Test
    void pauseAndResumeOfAStoppedServerThrow() {
        server.stop();

        assertThatThrownBy(server::pause).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
        assertThatThrownBy(server::resume).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
    }

    @Test
    void stopIsGracefulIdempotentAndDeletesTheDirectory() {
        long pid = server.pid();
        Path directory = server.directory();

        server.stop();
        server.stop();

        assertThat(server.isRunning()).isFalse();
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
        assertThat(directory).doesNotExist();
    }

    @Test
    void closeStopsTheServer() {
        long pid;
        try (RedisServer other = RedisServer.start()) {
            pid = other.pid();
            assertThat(other.port()).isNotEqualTo(server.port());
            assertThat(other.command("PING")).isEqualTo("PONG");
        }
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
    }

    @Test
    void builderPassesOptionsAndUsesTheGivenPort() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        try (RedisServer custom = RedisServer.builder()
                .port(port)
                .arg("maxmemory", "10mb")
                .arg("--maxmemory-policy", "allkeys-lru")
                .args("--databases", "4")
                .startupTimeout(Duration.ofSeconds(20))
                .binary(RedisBinary.locate().path())
                .start()) {
            assertThat(custom.port()).isEqualTo(port);
            assertThat(custom.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "10485760"));
            assertThat(custom.command("CONFIG", "GET", "maxmemory-policy")).isEqualTo(List.of("maxmemory-policy", "allkeys-lru"));
            assertThat(custom.command("CONFIG", "GET", "databases")).isEqualTo(List.of("databases", "4"));
        }
    }

    @Test
    void builderRejectsInvalidAndRepeatedSettings() {
        assertThatThrownBy(() -> RedisServer.builder().port(6379))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port").hasMessageContaining("6379");
        assertThatThrownBy(() -> RedisServer.builder().port(70000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
        assertThatThrownBy(() -> RedisServer.builder().port(0).port(0))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("port was already set");
        assertThatThrownBy(() -> RedisServer.builder().arg("port", "1234"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--port");
        assertThatThrownBy(() -> RedisServer.builder().args("--dir", "/tmp"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("args[0]");
        assertThatThrownBy(() -> RedisServer.builder().arg("max memory", "1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> RedisServer.builder().startupTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("startupTimeout");
        assertThatThrownBy(() -> RedisServer.builder().binary(Path.of("/no/such/redis-server")).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("binary");
    }

    @Test
    void startOnATakenPortFailsWithTheLogTail() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            RedisServer.Builder builder = RedisServer.builder().port(taken.getLocalPort());

            assertThatThrownBy(builder::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("port " + taken.getLocalPort())
                    .hasMessageContaining("Address already in use");
        }
    }

    @Test
    void startWithABadOptionFailsWithTheLogTail() {
        RedisServer.Builder builder = RedisServer.builder().arg("no-such-option", "1");

        assertThatThrownBy(builder::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("exited with code")
                .hasMessageContaining("no-such-option");
    }

    @Test
    void serverFilesLiveInThisJvmsWorkspaceWithAPidFileForTheReaper() throws IOException {
        assertThat(server.directory().getParent()).isEqualTo(Workspace.jvmDirectory());
        try (Stream<Path> pidFiles = Files.list(Workspace.jvmDirectory().resolve("pids"))) {
            assertThat(pidFiles.map(file -> file.getFileName().toString()))
                    .anyMatch(name -> name.startsWith(server.pid() + "-"));
        }
    }
}
