package io.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Work under a reactive hold runs on the thread that completed the acquire, for an uncontended
 * acquire usually one of the client's own I/O threads. A blocking call of the same client there
 * (the Reactive guide's "check the hold count inside the work") could never get its reply, which
 * that very thread must read: it fails at once with an {@link IllegalStateException} that says to
 * move the work off with {@code publishOn}, instead of waiting out the command timeout. Moved off,
 * the same call works.
 */
class BlockingInTheWorkTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    /** Long, so that "at once" is told apart from "after the command timeout" without timing it. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

    private RedisServer server;
    private Relock relock;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        relock = Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
                .commandTimeout(COMMAND_TIMEOUT)
                .build());
    }

    @AfterEach
    void close() {
        if (server.isPaused()) {
            server.resume();
        }
        relock.close();
    }

    /**
     * Subscribes to {@code guarded} while the server is paused, so that the acquire's reply, and
     * with it the work, surely comes on the client's I/O thread (a quick reply may otherwise be
     * there before the pipeline listens, and the work run on the subscribing thread), then
     * resumes it: the step that follows sees what the work did.
     */
    private <T> StepVerifier.Step<T> onTheIoThread(org.reactivestreams.Publisher<T> guarded) {
        server.pause();
        return StepVerifier.create(guarded).expectSubscription().then(server::resume);
    }

    @Test
    void aBlockingCallOnTheClientsIoThreadFailsAtOnceNamingPublishOn() {
        DistributedLock lock = relock.getLock("blocking");
        AtomicReference<String> thread = new AtomicReference<>();
        Mono<Boolean> work = Mono.fromCallable(() -> {
            thread.set(Thread.currentThread().getName());
            return lock.isHeldByThread(1);
        });

        onTheIoThread(ReactiveLock.of(lock).withLock(work))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("lock 'blocking'")
                        .hasMessageContaining("I/O thread")
                        .hasMessageContaining("publishOn(Schedulers.boundedElastic())")
                        .hasMessageContaining("withContext(Dispatchers.IO)"))
                // Well within the 60 s command timeout: the call did not wait for a reply.
                .verify(PROMPTLY);
        assertThat(thread.get()).as("the work's thread").startsWith("lettuce-");
        assertThat(lock.isLocked()).as("released after the failure").isFalse();
    }

    @Test
    void everyBlockingCallOfTheClientFailsThereAndAnAcquireHoldsNothing() {
        DistributedLock lock = relock.getLock("blocking-flux");
        onTheIoThread(ReactiveLock.of(lock).withLock(Flux.defer(() -> Flux.just(lock.getHoldCount()))))
                .expectError(IllegalStateException.class)
                .verify(PROMPTLY);
        onTheIoThread(ReactiveLock.of(lock).withLock(Mono.fromCallable(() -> relock.getLockInfo("other"))))
                .expectError(IllegalStateException.class)
                .verify(PROMPTLY);
        DistributedLock other = relock.getLock("other");
        onTheIoThread(ReactiveLock.of(lock).withLock(Mono.fromCallable(other::tryLock)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("acquire lock 'other'"))
                .verify(PROMPTLY);
        assertThat(other.isLocked()).as("the refused acquire sent nothing").isFalse();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void movedOffWithPublishOnTheSameCallWorks() {
        DistributedLock lock = relock.getLock("moved");
        long owner = Relock.newOwnerId();
        Mono<Boolean> work = Mono.just(owner).publishOn(Schedulers.boundedElastic()).map(lock::isHeldByThread);

        onTheIoThread(ReactiveLock.of(lock).withLock(work).contextWrite(ReactiveLock.ownedBy(owner)))
                .expectNext(true).expectComplete().verify(PROMPTLY);
    }
}
