package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A fleet in the middle of a migration: Relock and Redisson threads want one lock name at the
 * same time, under steady load, and both libraries keep getting it.
 *
 * <p>History checked: no two holders at any moment (an overlap detector inside the critical
 * section), and progress both ways: every thread of either library acquires within
 * {@link #MAX_WAIT} of asking, and each library's share of the acquisitions, per thread, is
 * within {@link #SHARE_FACTOR} of an equal share.
 */
class MixedFleetTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    /**
     * The bound docs/migrating-from-redisson.md gives for a thread of either library in a mixed
     * fleet (measured: 0.2 s).
     */
    static final Duration MAX_WAIT = Duration.ofSeconds(2);
    /** Each library's acquisitions per thread are within this factor of an equal share. */
    static final double SHARE_FACTOR = 4.0;

    private static final Duration RUN = Duration.ofSeconds(Long.getLong("mixed.seconds", 6));
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final List<RedissonClient> redissons = new ArrayList<>();

    @AfterEach
    void stopRedisson() {
        redissons.forEach(RedissonClient::shutdown);
    }

    private RedissonClient redisson() {
        Config config = new Config();
        config.setLockWatchdogTimeout(LEASE.toMillis());
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
        RedissonClient client = Redisson.create(config);
        redissons.add(client);
        return client;
    }

    @Test
    void redissonThreadsGetTheLockNextToTwoBusyRelockClients() throws Exception {
        Relock a = clients.create(LEASE);
        Relock b = clients.create(LEASE);
        RedissonClient r = redisson();
        Fleet fleet = new Fleet();
        fleet.add("relock", 4, () -> a.getLock("mixed"));
        fleet.add("relock", 4, () -> b.getLock("mixed"));
        fleet.add("redisson", 2, () -> r.getLock("mixed"));
        fleet.runAndCheck();
    }

    @Test
    void redissonThreadsGetTheLockNextToOneBusyRelockClient() throws Exception {
        Relock a = clients.create(LEASE);
        RedissonClient r = redisson();
        Fleet fleet = new Fleet();
        fleet.add("relock", 4, () -> a.getLock("mixed-one"));
        fleet.add("redisson", 2, () -> r.getLock("mixed-one"));
        fleet.runAndCheck();
    }

    @Test
    void relockThreadsGetTheLockNextToBusyRedissonClients() throws Exception {
        Relock a = clients.create(LEASE);
        RedissonClient r = redisson();
        RedissonClient s = redisson();
        Fleet fleet = new Fleet();
        fleet.add("relock", 2, () -> a.getLock("mixed-back"));
        fleet.add("redisson", 4, () -> r.getLock("mixed-back"));
        fleet.add("redisson", 4, () -> s.getLock("mixed-back"));
        fleet.runAndCheck();
    }

    @Test
    void writersOfBothLibrariesShareTheReadWriteLock() throws Exception {
        Relock a = clients.create(LEASE);
        Relock b = clients.create(LEASE);
        RedissonClient r = redisson();
        Fleet fleet = new Fleet();
        fleet.add("relock", 4, () -> a.getReadWriteLock("mixed-rw").writeLock());
        fleet.add("relock", 4, () -> b.getReadWriteLock("mixed-rw").writeLock());
        fleet.add("redisson", 2, () -> r.getReadWriteLock("mixed-rw").writeLock());
        fleet.runAndCheck();
    }

    /** Threads of both libraries taking one lock in a loop for {@link #RUN}. */
    private static final class Fleet {

        private final List<Worker> workers = new ArrayList<>();
        private final AtomicBoolean inside = new AtomicBoolean();
        private final AtomicInteger overlaps = new AtomicInteger();

        void add(String library, int threads, java.util.function.Supplier<Lock> lock) {
            for (int i = 0; i < threads; i++) {
                workers.add(new Worker(library, lock.get()));
            }
        }

        void runAndCheck() throws Exception {
            CountDownLatch gate = new CountDownLatch(1);
            long end = System.nanoTime() + RUN.toNanos();
            List<CompletableFuture<Void>> running = new ArrayList<>();
            for (Worker worker : workers) {
                running.add(Threads.run(() -> {
                    gate.await();
                    worker.loop(end, inside, overlaps);
                    return null;
                }));
            }
            gate.countDown();
            for (CompletableFuture<Void> worker : running) {
                worker.get(RUN.toMillis() + 60_000, TimeUnit.MILLISECONDS);
            }
            report();
            assertThat(overlaps.get()).as("two holders at once").isZero();
            long total = workers.stream().mapToLong(w -> w.acquisitions.get()).sum();
            double equal = (double) total / workers.size();
            for (String library : List.of("relock", "redisson")) {
                List<Worker> mine = workers.stream().filter(w -> w.library.equals(library)).toList();
                double perThread = mine.stream().mapToLong(w -> w.acquisitions.get()).sum() / (double) mine.size();
                assertThat(perThread).as(library + " acquisitions per thread against an equal share of " + equal)
                        .isBetween(equal / SHARE_FACTOR, equal * SHARE_FACTOR);
                for (Worker worker : mine) {
                    assertThat(Duration.ofNanos(worker.maxWaitNanos.get())).as(library + " thread's longest wait")
                            .isLessThanOrEqualTo(MAX_WAIT);
                }
            }
        }

        private void report() {
            for (String library : List.of("relock", "redisson")) {
                StringBuilder line = new StringBuilder(library).append(':');
                for (Worker w : workers) {
                    if (w.library.equals(library)) {
                        line.append(' ').append(w.acquisitions.get()).append('/')
                                .append(TimeUnit.NANOSECONDS.toMillis(w.maxWaitNanos.get())).append("ms");
                    }
                }
                System.out.println("[mixed fleet] " + line);
            }
        }
    }

    private static final class Worker {

        final String library;
        final Lock lock;
        final AtomicLong acquisitions = new AtomicLong();
        final AtomicLong maxWaitNanos = new AtomicLong();

        Worker(String library, Lock lock) {
            this.library = library;
            this.lock = lock;
        }

        void loop(long end, AtomicBoolean inside, AtomicInteger overlaps) throws InterruptedException {
            while (System.nanoTime() < end) {
                long asked = System.nanoTime();
                if (!lock.tryLock(RUN.toMillis() + 5_000, TimeUnit.MILLISECONDS)) {
                    maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
                    continue;
                }
                maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
                try {
                    if (!inside.compareAndSet(false, true)) {
                        overlaps.incrementAndGet();
                    }
                    acquisitions.incrementAndGet();
                    Thread.onSpinWait();
                    inside.set(false);
                } finally {
                    lock.unlock();
                }
            }
        }
    }
}
