package io.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.DistributedLock;

class RelockLockRegistryTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private Relock relock;
    private Relock otherRelock;
    private RelockLockRegistry registry;
    private RelockLockRegistry otherRegistry;
    private ExecutorService executor;

    @BeforeEach
    void setUp(RedisServer server) {
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        otherRelock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        registry = new RelockLockRegistry(relock, "app");
        otherRegistry = new RelockLockRegistry(otherRelock, "app");
        executor = Executors.newCachedThreadPool();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        otherRelock.close();
        relock.close();
    }

    @Test
    void twoRegistriesOnTwoClientsLetOneThreadAtATimeIntoTheCriticalSection() throws Exception {
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger entries = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        for (RelockLockRegistry each : List.of(registry, otherRegistry, registry, otherRegistry)) {
            workers.add(executor.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    Lock lock = each.obtain("orders");
                    lock.lock();
                    try {
                        assertThat(inside.compareAndSet(false, true)).as("nobody else inside").isTrue();
                        entries.incrementAndGet();
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        assertThat(entries).hasValue(100);
    }

    @Test
    void theLockIsTheRelockLockNamedRegistryKeyColonLockKey() {
        Lock lock = registry.obtain("orders");
        lock.lock();
        try {
            assertThat(relock.getLock("app:orders").isHeldByCurrentThread()).isTrue();
        } finally {
            lock.unlock();
        }
        assertThat(relock.getLock("app:orders").isLocked()).isFalse();
    }

    @Test
    void anEmptyRegistryKeyNamesTheLockByItsKeyAlone() {
        Lock lock = new RelockLockRegistry(relock, "").obtain("orders");
        lock.lock();
        try {
            assertThat(relock.getLock("orders").isHeldByCurrentThread()).isTrue();
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aThreadReentersItsLockAndHoldsItUntilTheLastUnlock() throws Exception {
        Lock lock = registry.obtain("orders");
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        assertThat(registry.obtain("orders").tryLock(1, TimeUnit.SECONDS)).as("a second object, same lock").isTrue();
        assertThat(relock.getLock("app:orders").getHoldCount()).isEqualTo(3);

        lock.unlock();
        lock.unlock();
        assertThat(tryLockElsewhere("orders")).as("still held once").isFalse();
        lock.unlock();
        assertThat(tryLockElsewhere("orders")).as("released").isTrue();
    }

    @Test
    void tryLockGivesUpWhenItsWaitRunsOut() throws Exception {
        Lock held = otherRegistry.obtain("orders");
        held.lock();
        try {
            long start = System.nanoTime();
            assertThat(registry.obtain("orders").tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(registry.obtain("orders").tryLock()).isFalse();
        } finally {
            held.unlock();
        }
    }

    @Test
    void tryLockGetsTheLockWhenTheHolderReleasesItWithinTheWait() throws Exception {
        Lock held = otherRegistry.obtain("orders");
        held.lock();
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            Lock lock = registry.obtain("orders");
            try {
                boolean acquired = lock.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    lock.unlock();
                }
                return acquired;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }, executor);
        held.unlock();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void tryLockIgnoresTheInterruptFlagAndKeepsIt() {
        for (RelockLockRegistry each : List.of(registry, new RelockLockRegistry(relock, "app", Duration.ofSeconds(30)))) {
            Lock lock = each.obtain("orders");
            Thread.currentThread().interrupt();
            try {
                assertThat(lock.tryLock()).as("%s", each).isTrue();
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
            lock.unlock();
        }
    }

    @Test
    void anInterruptEndsTheWaitOfLockInterruptibly() throws Exception {
        Lock held = otherRegistry.obtain("orders");
        held.lock();
        try {
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    registry.obtain("orders").lockInterruptibly();
                    outcome.complete(null);
                } catch (Throwable e) {
                    outcome.complete(e);
                }
            });
            waiter.start();
            Eventually.await(Duration.ofSeconds(10), "the waiter waits",
                    () -> waiter.getState() == Thread.State.WAITING || waiter.getState() == Thread.State.TIMED_WAITING);
            waiter.interrupt();
            assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            waiter.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(relock.getLock("app:orders").isHeldByThread(waiter.getId())).isFalse();
        } finally {
            held.unlock();
        }
    }

    @Test
    void unlockByAThreadThatDoesNotHoldTheLockThrows() throws Exception {
        Lock lock = registry.obtain("orders");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);

        lock.lock();
        try {
            Future<?> stranger = executor.submit(() -> registry.obtain("orders").unlock());
            assertThatThrownBy(() -> stranger.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IllegalMonitorStateException.class);
            assertThatThrownBy(() -> otherRegistry.obtain("orders").unlock())
                    .as("another client, same thread id").isInstanceOf(IllegalMonitorStateException.class);
            assertThat(relock.getLock("app:orders").isHeldByCurrentThread()).isTrue();
        } finally {
            lock.unlock();
        }
    }

    @Test
    void obtainTakesAnyKeyByItsString() throws Exception {
        Lock byInteger = registry.obtain(42);
        byInteger.lock();
        try {
            assertThat(relock.getLock("app:42").isHeldByCurrentThread()).isTrue();
            assertThat(tryLockElsewhere("42")).as("42 and \"42\" are one lock").isFalse();
        } finally {
            byInteger.unlock();
        }
        assertThat(registry.obtain("42")).isEqualTo(registry.obtain(42)).isNotEqualTo(otherRegistry.obtain(42));
    }

    @Test
    void obtainRejectsANullOrEmptyKey() {
        assertThatThrownBy(() -> registry.obtain(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lockKey");
        assertThatThrownBy(() -> registry.obtain(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockKey");
        assertThatThrownBy(() -> registry.obtain(new StringBuilder()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockKey");
    }

    @Test
    void theConstructorsRejectBadArguments() {
        assertThatThrownBy(() -> new RelockLockRegistry(null, "app"))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("relock");
        assertThatThrownBy(() -> new RelockLockRegistry(relock, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("registryKey");
        assertThatThrownBy(() -> new RelockLockRegistry(relock, "app", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> new RelockLockRegistry(relock, "app", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> new RelockLockRegistry(relock, "app", Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
    }

    @Test
    void withoutALeaseTimeTheWatchdogRenewsTheHold() {
        assertThat(registry.leaseTime()).isNull();
        Lock lock = registry.obtain("orders");
        lock.lock();
        try {
            long watchdog = relock.config().watchdogTimeout().toMillis();
            assertThat(relock.getLock("app:orders").remainTimeToLive()).isBetween(watchdog / 2, watchdog);
            assertThat(relock.heldLocks()).singleElement()
                    .satisfies(held -> assertThat(held.watchdog()).isTrue());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aRegistryWithALeaseTimeGivesEachHoldThatLeaseAndRenewLockRestartsIt() {
        RelockLockRegistry leased = new RelockLockRegistry(relock, "app", Duration.ofSeconds(5));
        assertThat(leased.leaseTime()).isEqualTo(Duration.ofSeconds(5));
        Lock lock = leased.obtain("orders");
        lock.lock();
        try {
            assertThat(ttl("app:orders")).isBetween(1L, 5_000L);

            leased.renewLock("orders", Duration.ofMinutes(10));
            assertThat(ttl("app:orders")).isGreaterThan(Duration.ofMinutes(9).toMillis());
            assertThat(relock.getLock("app:orders").getHoldCount()).isEqualTo(1);

            leased.renewLock("orders");
            assertThat(ttl("app:orders")).isBetween(1L, 5_000L);
            assertThat(relock.getLock("app:orders").getHoldCount()).isEqualTo(1);
        } finally {
            lock.unlock();
        }
        assertThat(relock.getLock("app:orders").isLocked()).as("one unlock released it").isFalse();
    }

    @Test
    void renewLockOfAWatchdogHoldKeepsTheWatchdog() {
        Lock lock = registry.obtain("orders");
        lock.lock();
        try {
            registry.renewLock("orders", Duration.ofMinutes(10));
            registry.renewLock("orders");
            long watchdog = relock.config().watchdogTimeout().toMillis();
            assertThat(ttl("app:orders")).isBetween(1L, watchdog);
            assertThat(relock.heldLocks()).singleElement()
                    .satisfies(held -> assertThat(held.watchdog()).isTrue());
            assertThat(relock.getLock("app:orders").getHoldCount()).isEqualTo(1);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void renewLockOfALockTheThreadDoesNotHoldThrows() {
        assertThatThrownBy(() -> registry.renewLock("orders"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("app:orders");
        Lock held = otherRegistry.obtain("orders");
        held.lock();
        try {
            assertThatThrownBy(() -> registry.renewLock("orders", Duration.ofSeconds(5)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not hold");
            assertThat(otherRelock.getLock("app:orders").isHeldByCurrentThread()).isTrue();
        } finally {
            held.unlock();
        }
        assertThatThrownBy(() -> registry.renewLock("orders", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
    }

    @Test
    void aLockTakenWithATtlEndsWithItsLease() throws Exception {
        DistributedLock lock = registry.obtain("orders");
        lock.lock(Duration.ofSeconds(20));
        try {
            assertThat(ttl("app:orders")).isBetween(1L, 20_000L);
            assertThat(relock.heldLocks()).singleElement()
                    .satisfies(held -> assertThat(held.watchdog()).isFalse());
        } finally {
            lock.unlock();
        }

        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofMillis(300))).isTrue();
        long start = System.nanoTime();
        assertThat(otherRegistry.obtain("orders").tryLock(30, TimeUnit.SECONDS))
                .as("the lease ran out while held").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);

        assertThatThrownBy(() -> lock.lock(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
        assertThatThrownBy(() -> lock.tryLock(null, Duration.ofSeconds(1)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("waitTime");
    }

    @Test
    void executeLockedRunsTheTaskHoldingTheLock() throws Exception {
        String result = registry.executeLocked("orders", () -> {
            assertThat(relock.getLock("app:orders").isHeldByCurrentThread()).isTrue();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(relock.getLock("app:orders").isLocked()).isFalse();
    }

    @Test
    void expireUnusedOlderThanLeavesHeldLocksAlone() {
        Lock lock = registry.obtain("orders");
        lock.lock();
        registry.expireUnusedOlderThan(0);
        assertThat(relock.getLock("app:orders").isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(relock.getLock("app:orders").isLocked()).isFalse();
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> registry.obtain("orders").newCondition())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    private long ttl(String name) {
        return relock.getLock(name).remainTimeToLive();
    }

    /** Whether a thread of the other client gets the lock at once (and gives it back). */
    private boolean tryLockElsewhere(String key) throws Exception {
        return executor.submit(() -> {
            Lock lock = otherRegistry.obtain(key);
            boolean acquired = lock.tryLock();
            if (acquired) {
                lock.unlock();
            }
            return acquired;
        }).get(10, TimeUnit.SECONDS);
    }
}
