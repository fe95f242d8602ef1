package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Readers share, writers exclude; downgrade, refused upgrade, crashed readers, wake-ups, Redisson. */
class ReadWriteLockTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    @Test
    void readersShareAndNoWriterOverlapsAnyone() throws Exception {
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger maxReaders = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            DistributedReadWriteLock lock = clients.create().getReadWriteLock("shared");
            for (int t = 0; t < 6; t++) {
                boolean writer = t < 2;
                workers.add(Threads.run(() -> {
                    gate.await();
                    for (int i = 0; i < 15; i++) {
                        DistributedLock half = writer ? lock.writeLock() : lock.readLock();
                        half.lock();
                        try {
                            if (writer) {
                                if (writers.incrementAndGet() > 1 || readers.get() > 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                writers.decrementAndGet();
                            } else {
                                int now = readers.incrementAndGet();
                                maxReaders.accumulateAndGet(now, Math::max);
                                if (writers.get() > 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                readers.decrementAndGet();
                            }
                        } finally {
                            half.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        assertThat(violations.get()).isZero();
        assertThat(server.command("EXISTS", "shared")).isEqualTo(0L);
    }

    @Test
    void readersHoldTogetherAndKeepWritersOut() throws Exception {
        DistributedReadWriteLock mine = clients.create().getReadWriteLock("together");
        DistributedReadWriteLock theirs = clients.create().getReadWriteLock("together");
        DistributedLock writer = clients.create().getReadWriteLock("together").writeLock();
        mine.readLock().lock();
        assertThat(theirs.readLock().tryLock()).isTrue();
        assertThat(writer.tryLock()).isFalse();
        assertThat(clients.create().getLockInfo("together").holders()).hasSize(2);
        mine.readLock().unlock();
        assertThat(writer.tryLock()).as("one reader left").isFalse();
        theirs.readLock().unlock();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
    }

    @Test
    void aWriterMayDowngradeToARead() {
        Relock relock = clients.create();
        DistributedReadWriteLock lock = relock.getReadWriteLock("downgrade");
        lock.writeLock().lock();
        lock.readLock().lock();
        lock.writeLock().unlock();
        assertThat(server.command("HGET", "downgrade", "mode")).isEqualTo("read");
        assertThat(lock.readLock().isHeldByCurrentThread()).isTrue();
        DistributedReadWriteLock other = clients.create().getReadWriteLock("downgrade");
        assertThat(other.readLock().tryLock()).as("readers share after the downgrade").isTrue();
        assertThat(other.writeLock().isLocked()).isFalse();
        other.readLock().unlock();
        lock.readLock().unlock();
        assertThat(server.command("EXISTS", "downgrade")).isEqualTo(0L);
    }

    @Test
    void anUpgradeIsRefusedInsteadOfDeadlocking() {
        DistributedReadWriteLock lock = clients.create().getReadWriteLock("upgrade");
        lock.readLock().lock();
        assertThatThrownBy(() -> lock.writeLock().tryLock(5, TimeUnit.SECONDS))
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'upgrade'")
                .hasMessageContaining("read lock first");
        assertThat(lock.readLock().getHoldCount()).isEqualTo(1);
        lock.readLock().unlock();
        assertThat(lock.writeLock().tryLock()).isTrue();
        lock.writeLock().unlock();
    }

    @Test
    void aCrashedReaderStopsBlockingWritersAfterItsOwnLease() throws Exception {
        DistributedReadWriteLock lock = clients.create().getReadWriteLock("crashed-reader");
        lock.readLock().lock(); // a live reader renewed by its watchdog
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "crashed-reader",
                Long.toString(Clients.SHORT_WATCHDOG.toMillis()), "read")) {
            child.awaitLine("LOCKED", LockContractTest.CHILD_START);
            assertThat(clients.create().getLockInfo("crashed-reader").holders()).hasSize(2);
            child.kill();
        }
        // The live reader leaves; the dead one's timeout keys run out, so a writer gets in.
        lock.readLock().unlock();
        DistributedLock writer = clients.create().getReadWriteLock("crashed-reader").writeLock();
        assertThat(writer.tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        writer.unlock();
    }

    @Test
    void releasingTheWriteLockWakesEveryWaitingReader() throws Exception {
        DistributedReadWriteLock held = clients.create().getReadWriteLock("wake-readers");
        held.writeLock().lock();
        List<CompletableFuture<Boolean>> readers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            DistributedLock reader = clients.create().getReadWriteLock("wake-readers").readLock();
            readers.add(Threads.call(() -> {
                boolean acquired = reader.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    reader.unlock();
                }
                return acquired;
            }));
        }
        Eventually.await(PROMPTLY, "three waiting readers",
                () -> clients.create().getLockInfo("wake-readers").waitingClients() == 3);
        held.writeLock().unlock();
        for (CompletableFuture<Boolean> reader : readers) {
            assertThat(reader.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void releasingTheLastReadLockWakesAWaitingWriter() throws Exception {
        DistributedReadWriteLock held = clients.create().getReadWriteLock("wake-writer");
        held.readLock().lock();
        DistributedLock writer = clients.create().getReadWriteLock("wake-writer").writeLock();
        CompletableFuture<Boolean> waiting = Threads.call(() -> writer.tryLock(30, TimeUnit.SECONDS));
        Eventually.await(PROMPTLY, "a waiting writer",
                () -> clients.create().getLockInfo("wake-writer").waitingClients() == 1);
        held.readLock().unlock();
        assertThat(waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void relockAndRedissonReadWriteLocksInteroperate() throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(2)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(1);
        RedissonClient redisson = Redisson.create(config);
        try {
            RReadWriteLock theirs = redisson.getReadWriteLock("both");
            DistributedReadWriteLock mine = clients.create().getReadWriteLock("both");
            CountDownLatch readHeld = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> redissonReader = Threads.run(() -> {
                theirs.readLock().lock();
                readHeld.countDown();
                release.await();
                theirs.readLock().unlock();
                return null;
            });
            assertThat(readHeld.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(mine.readLock().tryLock()).as("readers of both libraries share").isTrue();
            mine.readLock().unlock();
            assertThat(mine.writeLock().tryLock()).as("a Redisson reader excludes a Relock writer").isFalse();
            CompletableFuture<Boolean> writer = Threads.call(() -> mine.writeLock().tryLock(30, TimeUnit.SECONDS));
            release.countDown();
            redissonReader.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(writer.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            boolean redissonReadWhileWritten = Threads.call(() -> theirs.readLock().tryLock()).get();
            assertThat(redissonReadWhileWritten).isFalse();
        } finally {
            redisson.shutdown();
        }
    }
}
