package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.relock.RelockConnectionException;

/**
 * A Boot application whose Redis is unreachable fails to start with Relock's explanation instead
 * of a stack of {@code UnsatisfiedDependencyException}s: the server it tried (password masked),
 * what to check, and {@code relock.require-redis-at-startup}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RelockConnectionFailureAnalyzerTest {

    /** A port on which nothing listens: the system's pick, closed again. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Test
    void anUnreachableRedisFailsTheStartWithTheServerWhatToCheckAndTheProperty(CapturedOutput output)
            throws IOException {
        int port = closedPort();
        SpringApplicationBuilder app = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.data.redis.url=redis://reports:s3cret-pass@127.0.0.1:" + port,
                        "spring.data.redis.connect-timeout=2s", "spring.main.banner-mode=off");

        assertThatThrownBy(app::run).hasRootCauseInstanceOf(java.net.ConnectException.class)
                .hasStackTraceContaining("RelockConnectionException");

        String report = output.getAll();
        assertThat(report).contains("APPLICATION FAILED TO START")
                .contains("Relock could not connect to Redis while the application started")
                .contains("cannot connect to Redis at SINGLE_SERVER [redis://127.0.0.1:" + port + "]")
                .contains("the Redis server is running and reachable")
                .contains("spring.data.redis.url").contains("TLS").contains("AUTH")
                .contains("relock.require-redis-at-startup=false")
                .doesNotContain("s3cret-pass");
    }

    @Test
    void aPasswordInTheMessageIsMasked() {
        RelockConnectionException failure = new RelockConnectionException(
                "cannot connect to Redis at SENTINEL [redis://admin:hunter2@10.0.0.1:26379]: refused", null);

        FailureAnalysis analysis = new RelockConnectionFailureAnalyzer()
                .analyze(new IllegalStateException("context", failure));

        assertThat(analysis.getDescription()).contains("[redis://***@10.0.0.1:26379]").doesNotContain("hunter2");
        assertThat(analysis.getCause()).isSameAs(failure);
    }

    @Test
    void otherFailuresAreNotItsConcern() {
        assertThat(new RelockConnectionFailureAnalyzer().analyze(new IllegalStateException("no Relock here")))
                .isNull();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}
}
