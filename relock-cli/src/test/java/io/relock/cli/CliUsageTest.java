package io.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.testkit.TlsCertificates;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Help, bad input, an unreachable Redis, a port that is not Redis's and wrong credentials, each run as its own process. */
class CliUsageTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void helpListsEveryExitCode() {
        Cli.Result result = Cli.run("--help");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
        assertThat(result.out()).contains("inspect", "list", "force-unlock", "Exit codes:")
                .containsPattern("3 +inspect: the lock is free").containsPattern("5 +Redis trouble");
    }

    @Test
    void badInputIsAUsageErrorThatNamesTheOption() {
        Cli.Result noName = Cli.run("inspect");
        Cli.Result badDatabase = Cli.run("inspect", "x", "--database", "-1");
        Cli.Result badUri = Cli.run("list", "--redis", "http://localhost:6379");

        assertThat(noName.exitCode()).as(noName.toString()).isEqualTo(Main.USAGE);
        assertThat(noName.err()).startsWith("relock: Missing required parameter: 'NAME'")
                .contains("Try 'relock inspect --help'");
        assertThat(badDatabase.exitCode()).as(badDatabase.toString()).isEqualTo(Main.USAGE);
        assertThat(badDatabase.err()).startsWith("relock: --database must be 0 or more, not -1");
        assertThat(badUri.exitCode()).as(badUri.toString()).isEqualTo(Main.USAGE);
        assertThat(badUri.err()).startsWith("relock: --redis: ").contains("http://localhost:6379");
    }

    @Test
    void anUnreachableRedisExitsWith5AndSaysWhy() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }

        Cli.Result result = Cli.run("inspect", "x", "--redis", "redis://127.0.0.1:" + closedPort);

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.REDIS_ERROR);
        assertThat(result.err()).startsWith("relock: cannot connect to Redis").contains("Connection refused");
    }

    @Test
    void aPortWhereAnHttpServerAnswersExitsWith5AndSaysItIsNotRedis() throws Exception {
        ServerSocket http = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread answering = new Thread(() -> answerBadRequest(http), "http-400");
        answering.setDaemon(true);
        answering.start();
        Cli.Result result;
        try {
            result = Cli.run("inspect", "x", "--redis", "redis://127.0.0.1:" + http.getLocalPort());
        } finally {
            http.close();
            answering.join(Duration.ofSeconds(10).toMillis());
        }

        assertThat(answering.isAlive()).as("the HTTP server's thread ended").isFalse();
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.REDIS_ERROR);
        assertThat(result.err()).startsWith("relock: cannot connect to Redis")
                .contains("127.0.0.1:" + http.getLocalPort()).contains("did not answer as Redis does")
                .contains("Invalid first byte: 72 (H)");
    }

    /** An HTTP server that answers every connection with 400 until its socket is closed. */
    private static void answerBadRequest(ServerSocket http) {
        while (!http.isClosed()) {
            try (Socket connection = http.accept(); OutputStream out = connection.getOutputStream()) {
                out.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (SocketException closed) {
                return; // the server socket was closed: the test is over
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Test
    void aWrongPasswordExitsWith5AndIsNeverPrinted() {
        redis.server().command("ACL", "SETUSER", "operator", "on", ">right-secret-1729", "~*", "&*", "+@all");
        String uri = redis.server().uri();

        Cli.Result wrong = Cli.run("", Map.of(ConnectionOptions.PASSWORD_VARIABLE, "wrong-secret-4711"),
                "inspect", "x", "--user", "operator", "--redis", uri);
        Cli.Result wrongInUri = Cli.run("inspect", "x", "--redis",
                uri.replace("redis://", "redis://operator:uri-secret-9001@"));
        Cli.Result right = Cli.run("", Map.of(ConnectionOptions.PASSWORD_VARIABLE, "right-secret-1729"),
                "inspect", "x", "--user", "operator", "--redis", uri);

        assertThat(wrong.exitCode()).as(wrong.toString()).isEqualTo(Main.REDIS_ERROR);
        assertThat(wrong.err()).startsWith("relock: cannot connect to Redis").contains("WRONGPASS");
        assertThat(wrong.all()).doesNotContain("wrong-secret-4711");
        assertThat(wrongInUri.exitCode()).as(wrongInUri.toString()).isEqualTo(Main.REDIS_ERROR);
        assertThat(wrongInUri.all()).contains("WRONGPASS").doesNotContain("uri-secret-9001");
        assertThat(right.exitCode()).as(right.toString()).isEqualTo(Main.FREE);
        assertThat(right.all()).doesNotContain("right-secret-1729");
    }

    @Test
    void overTlsBothConnectionsTrustTheGivenCa() {
        RedisBinary binary = RedisBinary.locate();
        assumeTrue(binary.supportsTls(), "redis-server " + binary.path() + " has no TLS support");
        try (RedisServer server = RedisServer.builder().tls().start()) {
            Cli.Result result = Cli.run("inspect", "x", "--redis", server.tlsUri(), "--tls-ca",
                    TlsCertificates.get().caCertificate().toString());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.FREE);
            assertThat(result.out()).containsPattern("state +free");
        }
    }
}
