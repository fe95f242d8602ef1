package io.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Redis goes away while the work runs: the release fails, and the result says so. */
@ExtendWith(NoBlocking.class)
class ReleaseFailureTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private RedisServer server;
    private Relock relock;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        this.relock = Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
                .commandTimeout(Duration.ofSeconds(1))
                .build());
    }

    @AfterEach
    void close() {
        relock.close();
    }

    /** Kills the server on a thread that may block. */
    private Mono<Void> killServer() {
        return Mono.fromRunnable(server::kill).subscribeOn(Schedulers.boundedElastic()).then();
    }

    @Test
    void aFailedReleaseAfterTheWorkCompletedIsTheResult() {
        Mono<String> work = killServer().thenReturn("done");

        StepVerifier.create(ReactiveLock.of(relock.getLock("down")).withLock(work).subscribeOn(Schedulers.parallel()))
                .expectError(RelockException.class)
                .verify(Duration.ofSeconds(30));
    }

    @Test
    void aFailedReleaseAfterTheWorkFailedIsSuppressedInTheWorksError() {
        Mono<String> work = killServer().then(Mono.error(new IllegalStateException("work failed")));

        StepVerifier.create(ReactiveLock.of(relock.getLock("down")).withLock(work).subscribeOn(Schedulers.parallel()))
                .expectErrorSatisfies(error -> {
                    assertThat(error).isInstanceOf(IllegalStateException.class).hasMessage("work failed");
                    assertThat(error.getSuppressed()).singleElement().isInstanceOf(RelockException.class);
                })
                .verify(Duration.ofSeconds(30));
    }
}
