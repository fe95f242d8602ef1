package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * {@link WithLock} on methods that return a {@code CompletableFuture} or a {@code CompletionStage}:
 * the lock is held from the call until the returned stage completes, by an owner of its own,
 * without blocking the caller; every failure arrives in the future.
 */
class WithLockFutureTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    private RedisServer server;
    private Relock observer;

    @BeforeEach
    void connectObserver(RedisServer server) {
        this.server = server;
        this.observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void closeObserver() {
        observer.close();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withUserConfiguration(TestRelock.class)
                .withPropertyValues("test.redis.uri=" + server.uri())
                .withUserConfiguration(BillingConfig.class);
    }

    @Test
    void theLockIsHeldUntilTheReturnedFutureCompletesAndReleasedBeforeTheCallerHearsOfIt() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            DistributedLock lock = observer.getLock("bill:f1");
            CompletableFuture<String> work = billing.next();
            CompletableFuture<String> call = billing.charge("f1");
            Eventually.await(PROMPTLY, "the method ran", () -> billing.runs() == 1);
            assertThat(lock.isLocked()).isTrue();
            assertThat(call).isNotDone();
            work.complete("paid");
            assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("paid");
            assertThat(lock.isLocked()).as("released before the caller's future completed").isFalse();
        });
    }

    @Test
    void aFailedFutureReleasesAndTheCallerGetsItsException() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            CompletableFuture<String> work = billing.next();
            CompletableFuture<String> call = billing.charge("f2");
            Eventually.await(PROMPTLY, "the method ran", () -> billing.runs() == 1);
            work.completeExceptionally(new IllegalStateException("payment provider refused"));
            assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(IllegalStateException.class).hasMessage("payment provider refused");
            assertThat(observer.getLock("bill:f2").isLocked()).isFalse();
        });
    }

    @Test
    void whenTheLockIsNotAcquiredTheMethodDoesNotRunAndTheFutureSaysSoOrSkips() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            DistributedLock taken = observer.getLock("bill:f3");
            taken.lock();
            try {
                assertThatThrownBy(() -> billing.charge("f3").get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("bill:f3");
                assertThat(billing.chargeOrSkip("f3").get(10, TimeUnit.SECONDS)).isNull();
                assertThat(billing.runs()).isEqualTo(0);
            } finally {
                taken.unlock();
            }
            billing.next().complete("paid");
            assertThat(billing.chargeOrSkip("f3").get(10, TimeUnit.SECONDS)).isNull();
            assertThat(billing.runs()).isEqualTo(1);
        });
    }

    @Test
    void aBadKeyFailsTheFutureWithoutTouchingRedis() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            CompletableFuture<String> call = billing.charge(" ");
            assertThat(call).isCompletedExceptionally();
            assertThatThrownBy(call::join).cause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is blank");
            assertThat(billing.runs()).isEqualTo(0);
        });
    }

    @Test
    void cancellingWhileWaitingLeavesTheQueueAndTakesNothing() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            DistributedLock taken = observer.getLock("bill:f4");
            taken.lock();
            CompletionStage<String> call;
            try {
                call = billing.chargeWaiting("f4");
                Eventually.await(PROMPTLY, "the call waits for bill:f4", () -> subscribers("bill:f4") == 1);
                assertThat(call.toCompletableFuture().cancel(false)).isTrue();
                Eventually.await(PROMPTLY, "the cancelled wait left", () -> subscribers("bill:f4") == 0);
            } finally {
                taken.unlock();
            }
            // Nothing acquires it behind the test's back: another client takes it at once.
            try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                DistributedLock again = other.getLock("bill:f4");
                assertThat(again.tryLock()).isTrue();
                again.unlock();
            }
            assertThat(billing.runs()).isEqualTo(0);
            assertThat(call.toCompletableFuture()).isCancelled();
        });
    }

    @Test
    void cancellingWhileTheWorkRunsCancelsItAndReleases() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            CompletableFuture<String> work = billing.next();
            CompletableFuture<String> call = billing.charge("f5");
            Eventually.await(PROMPTLY, "the method ran", () -> billing.runs() == 1);
            assertThat(observer.getLock("bill:f5").isLocked()).isTrue();
            call.cancel(false);
            assertThat(work).isCancelled();
            Eventually.await(PROMPTLY, "bill:f5 released", () -> !observer.getLock("bill:f5").isLocked());
        });
    }

    @Test
    void aLeaseThatRanOutBeforeTheFutureCompletedIsALockLostException() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            CompletableFuture<String> work = billing.next();
            CompletableFuture<String> call = billing.chargeLeased("f6");
            Eventually.await(PROMPTLY, "the method ran", () -> billing.runs() == 1);
            Eventually.await(Duration.ofSeconds(30), "the lease of bill:f6 is over on Redis",
                    () -> !observer.getLock("bill:f6").isLocked());
            work.complete("paid");
            assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(LockLostException.class)
                    .isInstanceOf(LockLostException.class).hasMessageContaining("'bill:f6' was lost");
        });
    }

    private long subscribers(String lockName) {
        java.util.List<?> reply = (java.util.List<?>) server.command("PUBSUB", "NUMSUB",
                "redisson_lock__channel:{" + lockName + "}");
        return (Long) reply.get(1);
    }

    @Configuration(proxyBeanMethods = false)
    static class BillingConfig {
        @Bean
        Billing billing() {
            return new Billing();
        }
    }

    /** Methods that return the future the test hands them, so that the test decides when they complete. */
    static class Billing {

        private final AtomicInteger runs = new AtomicInteger();
        private volatile CompletableFuture<String> next = new CompletableFuture<>();

        /** How many times a guarded method ran. */
        public int runs() {
            return runs.get();
        }

        /** The future the next call returns. */
        public CompletableFuture<String> next() {
            next = new CompletableFuture<>();
            return next;
        }

        @WithLock(name = "bill", key = "#orderId", waitTime = "0")
        public CompletableFuture<String> charge(String orderId) {
            runs.incrementAndGet();
            return next;
        }

        @WithLock(name = "bill", key = "#orderId", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public CompletableFuture<Void> chargeOrSkip(String orderId) {
            runs.incrementAndGet();
            return next.thenAccept(paid -> { });
        }

        @WithLock(name = "bill", key = "#orderId")
        public CompletionStage<String> chargeWaiting(String orderId) {
            runs.incrementAndGet();
            return next;
        }

        /** A fixed lease, short for the test: not renewed, it runs out while the future is pending. */
        @WithLock(name = "bill", key = "#orderId", waitTime = "5s", leaseTime = "300ms")
        public CompletableFuture<String> chargeLeased(String orderId) {
            runs.incrementAndGet();
            return next;
        }
    }
}
