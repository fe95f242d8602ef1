package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.protocol.RedisProtocolException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pointed at a port where something other than Redis listens (here an HTTP server that answers
 * every request with {@code 400 Bad Request}), {@link Relock#create(RelockConfig)} says so
 * instead of passing on the client's protocol error.
 */
class NotRedisServerTest {

    private ServerSocket http;
    private Thread answering;

    @BeforeEach
    void startHttpServer() throws IOException {
        http = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        answering = new Thread(() -> {
            while (!http.isClosed()) {
                try (Socket connection = http.accept(); OutputStream out = connection.getOutputStream()) {
                    // As an HTTP server does: it answers a request. Answering before the client
                    // wrote its handshake would race the client's set-up instead (Lettuce then
                    // fails with "RedisHandshakeHandler not registered", not a protocol error).
                    if (connection.getInputStream().read() < 0) {
                        continue;
                    }
                    out.write(("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                } catch (SocketException closed) {
                    return; // the server socket was closed: the test is over
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }, "http-400");
        answering.setDaemon(true);
        answering.start();
    }

    @AfterEach
    void stopHttpServer() throws Exception {
        http.close();
        answering.join(Duration.ofSeconds(10).toMillis());
        assertThat(answering.isAlive()).as("the HTTP server's thread ended").isFalse();
    }

    @Test
    void createSaysTheServerDidNotAnswerAsRedisDoes() {
        String address = "127.0.0.1:" + http.getLocalPort();
        RelockConfig config = RelockConfig.builder().singleServer("redis://" + address)
                .commandTimeout(Duration.ofSeconds(2)).build();

        assertThatThrownBy(() -> Relock.create(config).close()).isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining(address)
                .hasMessageContaining("did not answer as Redis does")
                .hasMessageContaining("Invalid first byte: 72 (H)")
                .hasRootCauseInstanceOf(RedisProtocolException.class);
    }

    @Test
    void aServiceThatSpeaksFirstIsReportedAsNotRedisEveryTime() throws Exception {
        // As an SSH server does: a banner before the client says anything, racing Lettuce's set-up
        // of its handshake, which then fails now with a protocol error, now with its handshake
        // handler gone ("RedisHandshakeHandler not registered"); both must read the same.
        ServerSocket banner = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        try {
            Thread speaking = new Thread(() -> {
                while (!banner.isClosed()) {
                    try (Socket connection = banner.accept(); OutputStream out = connection.getOutputStream()) {
                        out.write("SSH-2.0-OpenSSH_9.6\r\n".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        // Until the client gives up, as a server waiting for its peer's banner.
                        while (connection.getInputStream().read() >= 0) {
                            // discard
                        }
                    } catch (IOException closed) {
                        // the client went away, or the test is over
                    }
                }
            }, "ssh-banner");
            speaking.setDaemon(true);
            speaking.start();
            String address = "127.0.0.1:" + banner.getLocalPort();
            RelockConfig config = RelockConfig.builder().singleServer("redis://" + address)
                    .commandTimeout(Duration.ofSeconds(2)).build();
            for (int i = 0; i < 30; i++) {
                assertThatThrownBy(() -> Relock.create(config).close()).as("try %d", i)
                        .isInstanceOf(RelockConnectionException.class)
                        .hasMessageContaining(address)
                        .hasMessageContaining("did not answer as Redis does")
                        .hasMessageNotContaining("<unresolved>")
                        .hasMessageNotContaining("RedisHandshakeHandler");
            }
            banner.close();
            speaking.join(Duration.ofSeconds(10).toMillis());
            assertThat(speaking.isAlive()).as("the banner server's thread ended").isFalse();
        } finally {
            banner.close();
        }
    }
}
