package io.relock.internal.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisConnectionException;
import io.relock.RelockConnectionException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

/** Connection failures in plain words: each reason once, addresses as host:port, Lettuce's races mapped. */
class ExceptionsTest {

    private static final String TARGET = "SINGLE_SERVER [redis://127.0.0.1:16399]";

    /** Lettuce's failure for a refused connect, as its connect path builds it (Netty adds the address). */
    private static RedisConnectionException refused() {
        ConnectException annotated = new ConnectException("Connection refused: /127.0.0.1:16399");
        annotated.initCause(new ConnectException("Connection refused"));
        return new RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:16399", annotated);
    }

    @Test
    void aRefusedConnectionReadsAsHostPortAndSaysRefusedOnce() {
        RelockConnectionException failure = Exceptions.cannotConnect(TARGET, refused());

        assertThat(failure.getMessage()).isEqualTo("cannot connect to Redis at " + TARGET
                + ": Unable to connect to 127.0.0.1:16399: Connection refused");
        assertThat(failure.getCause()).isInstanceOf(RedisConnectionException.class);
    }

    @Test
    void aReasonRepeatedInOneMessageIsSaidOnce() {
        assertThat(Exceptions.reason(new ConnectException("Connection refused: Connection refused")))
                .isEqualTo("Connection refused");
        assertThat(Exceptions.translate("acquire lock 'x'", refused()).getMessage())
                .isEqualTo("Redis connection failed: acquire lock 'x': Unable to connect to 127.0.0.1:16399: "
                        + "Connection refused");
    }

    @Test
    void socketAddressesReadAsHostPort() {
        assertThat(Exceptions.addresses("to localhost/<unresolved>:6379")).isEqualTo("to localhost:6379");
        assertThat(Exceptions.addresses("to redis.example.com/10.0.0.7:6380")).isEqualTo("to redis.example.com:6380");
        assertThat(Exceptions.addresses("refused: /127.0.0.1:6379")).isEqualTo("refused: 127.0.0.1:6379");
        assertThat(Exceptions.addresses("at localhost/[0:0:0:0:0:0:0:1]:6379")).isEqualTo("at localhost:6379");
        assertThat(Exceptions.addresses("at /[0:0:0:0:0:0:0:1]:6379")).isEqualTo("at [0:0:0:0:0:0:0:1]:6379");
        assertThat(Exceptions.addresses("[redis://127.0.0.1:6379/2]")).as("a URI stays as written")
                .isEqualTo("[redis://127.0.0.1:6379/2]");
    }

    @Test
    void aHandshakeThatNeverBeganIsReportedAsAServerThatIsNotRedis() {
        // What Lettuce reports when the peer spoke or closed before its handshake handler was set up.
        RedisConnectionException raced = new RedisConnectionException(
                "Unable to connect to 127.0.0.1/<unresolved>:16399",
                new IllegalStateException("RedisHandshakeHandler not registered"));

        RelockConnectionException failure = Exceptions.cannotConnect(TARGET, raced);

        assertThat(Exceptions.handshakeHandlerGone(raced)).isTrue();
        assertThat(failure.getMessage()).isEqualTo("cannot connect to Redis at " + TARGET + ": the server did not "
                + "answer as Redis does (is another service listening on that port?): Unable to connect to "
                + "127.0.0.1:16399: the connection closed before the Redis handshake began");
        assertThat(Exceptions.handshakeHandlerGone(refused())).isFalse();
        assertThat(Exceptions.handshakeHandlerGone(new IllegalStateException("another state"))).isFalse();
    }
}
