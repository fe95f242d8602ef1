package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Relock and Redisson on the same lock names exclude each other and wake each other's waiters,
 * so a fleet can move from one to the other a service at a time.
 */
class RedissonCompatibilityTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    // Long leases on both sides: a waiter that gets the lock well before them was woken by the
    // other library's unlock message, not by the lease running out.
    private static final Duration LEASE = Duration.ofSeconds(30);

    private RedissonClient redisson;
    private Relock relock;

    @BeforeEach
    void start() {
        relock = clients.create(LEASE);
        Config config = new Config();
        config.setLockWatchdogTimeout(LEASE.toMillis());
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
        redisson = Redisson.create(config);
    }

    @AfterEach
    void stop() {
        redisson.shutdown();
    }

    @Test
    void aRedissonWaiterIsWokenByARelockUnlock() throws Exception {
        DistributedLock mine = relock.getLock("migrating");
        mine.lock();
        Lock theirs = redisson.getLock("migrating");
        boolean enteredWhileHeld = Threads.call(() -> theirs.tryLock()).get();
        assertThat(enteredWhileHeld).isFalse();
        CompletableFuture<Boolean> waiter = Threads.call(() -> {
            boolean acquired = theirs.tryLock(LEASE.toSeconds(), TimeUnit.SECONDS);
            if (acquired) {
                theirs.unlock();
            }
            return acquired;
        });
        Eventually.await(PROMPTLY, "Redisson subscribed", () -> relock.getLockInfo("migrating").waitingClients() == 1);
        mine.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void aRelockWaiterIsWokenByARedissonUnlock() throws Exception {
        Lock theirs = redisson.getLock("migrating-back");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = Threads.run(() -> {
            theirs.lock();
            held.countDown();
            release.await();
            theirs.unlock();
            return null;
        });
        assertThat(held.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        DistributedLock mine = relock.getLock("migrating-back");
        assertThat(mine.tryLock()).isFalse();
        CompletableFuture<Boolean> waiter = Threads.call(() -> mine.tryLock(LEASE.toSeconds(), TimeUnit.SECONDS));
        Eventually.await(PROMPTLY, "Relock subscribed",
                () -> relock.getLockInfo("migrating-back").waitingClients() == 1);
        release.countDown();
        holder.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(mine.getHoldCount()).isZero(); // held by the waiter thread, not this one
    }

    @Test
    void relockAndRedissonThreadsNeverOverlap() throws Exception {
        List<Lock> locks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            locks.add(relock.getLock("mixed"));
            locks.add(redisson.getLock("mixed"));
        }
        int rounds = 15;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger counter = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (Lock lock : locks) {
            workers.add(Threads.run(() -> {
                gate.await();
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        int seen = counter.get();
                        Thread.yield();
                        counter.set(seen + 1);
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        assertThat(overlaps.get()).isZero();
        assertThat(counter.get()).isEqualTo(locks.size() * rounds);
    }
}
