package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockNotAcquiredException;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a {@link WithLock} method returns decides how long its lock is held, and is read when the
 * bean is created: the asynchronous returns the lock can follow are accepted, the others and the
 * settings that cannot apply to them fail the start, naming the method and the reason. No Redis.
 */
class WithLockReturnsCheckTest {

    private static LockPlan plan(String name) {
        for (Method method : Returns.class.getDeclaredMethods()) {
            if (method.getName().equals(name)) {
                return LockPlan.of(method, null);
            }
        }
        throw new IllegalArgumentException(name);
    }

    @Test
    void eachReturnIsHeldForWhatItStandsFor() {
        assertThat(plan("value").returns()).isEqualTo(LockPlan.Returns.VALUE);
        assertThat(plan("future").returns()).isEqualTo(LockPlan.Returns.FUTURE);
        assertThat(plan("stage").returns()).isEqualTo(LockPlan.Returns.FUTURE);
        assertThat(plan("mono").returns()).isEqualTo(LockPlan.Returns.MONO);
        assertThat(plan("flux").returns()).isEqualTo(LockPlan.Returns.FLUX);
        assertThat(plan("publisher").returns()).isEqualTo(LockPlan.Returns.FLUX);
        assertThat(plan("monoLeased").returns()).isEqualTo(LockPlan.Returns.MONO);
    }

    @Test
    void aReturnTheLockCannotFollowFailsTheStart() {
        assertThatThrownBy(() -> plan("plainFuture")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Returns.plainFuture()")
                .hasMessageContaining("it returns Future: the lock can follow a CompletableFuture or a CompletionStage");
        assertThatThrownBy(() -> plan("ownPublisher")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("it returns OwnPublisher: the lock can follow a Mono, a Flux or a Publisher");
    }

    @Test
    void settingsThatCannotApplyToAnAsynchronousReturnFailTheStart() {
        assertThatThrownBy(() -> plan("fencedMono")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Returns.fencedMono()")
                .hasMessageContaining("a FENCED lock's token is read with RelockLocks.current(), which is per thread"
                        + " and unknown to a Mono");
        assertThatThrownBy(() -> plan("fencedFuture")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("unknown to a CompletionStage");
        assertThatThrownBy(() -> plan("keptFlux")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holdAtLeast is not supported on a Flux");
        assertThatThrownBy(() -> plan("skippedStringFuture")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("onNotAcquired = SKIP on a CompletableFuture needs a Void or Optional value,"
                        + " not String");
    }

    @Test
    void skippingIsAnEmptyPublisherOrAFutureOfNothing() throws Throwable {
        LockNotAcquiredException notAcquired = new LockNotAcquiredException(java.util.List.of("x"), null, null);
        Returns target = new Returns();
        assertThat(plan("skippedMono").notAcquired(notAcquired, target, new Object[0])).as("empty").isNull();
        assertThat(plan("skippedVoidFuture").notAcquired(notAcquired, target, new Object[0]))
                .isInstanceOfSatisfying(CompletableFuture.class, future -> assertThat(future.join()).isNull());
        assertThat(plan("skippedOptionalFuture").notAcquired(notAcquired, target, new Object[0]))
                .isInstanceOfSatisfying(CompletableFuture.class,
                        future -> assertThat(future.join()).isEqualTo(Optional.empty()));
    }

    /** A publisher that is neither Reactor's nor the plain interface. */
    static class OwnPublisher implements Publisher<String> {
        @Override
        public void subscribe(Subscriber<? super String> subscriber) {
            Mono.just("x").subscribe(subscriber);
        }
    }

    static class Returns {
        @WithLock(name = "r")
        public String value() {
            return "x";
        }

        @WithLock(name = "r")
        public CompletableFuture<String> future() {
            return null;
        }

        @WithLock(name = "r")
        public CompletionStage<String> stage() {
            return null;
        }

        @WithLock(name = "r")
        public Mono<String> mono() {
            return null;
        }

        @WithLock(name = "r")
        public Flux<String> flux() {
            return null;
        }

        @WithLock(name = "r")
        public Publisher<String> publisher() {
            return null;
        }

        @WithLock(name = "r", leaseTime = "10s", waitTime = "1s")
        public Mono<String> monoLeased() {
            return null;
        }

        @WithLock(name = "r")
        public Future<String> plainFuture() {
            return null;
        }

        @WithLock(name = "r")
        public OwnPublisher ownPublisher() {
            return null;
        }

        @WithLock(name = "r", type = WithLock.Type.FENCED)
        public Mono<String> fencedMono() {
            return null;
        }

        @WithLock(name = "r", type = WithLock.Type.FENCED)
        public CompletableFuture<String> fencedFuture() {
            return null;
        }

        @WithLock(name = "r", holdAtLeast = "10s")
        public Flux<String> keptFlux() {
            return null;
        }

        @WithLock(name = "r", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public CompletableFuture<String> skippedStringFuture() {
            return null;
        }

        @WithLock(name = "r", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public Mono<String> skippedMono() {
            return null;
        }

        @WithLock(name = "r", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public CompletableFuture<Void> skippedVoidFuture() {
            return null;
        }

        @WithLock(name = "r", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public CompletableFuture<Optional<String>> skippedOptionalFuture() {
            return null;
        }
    }
}
