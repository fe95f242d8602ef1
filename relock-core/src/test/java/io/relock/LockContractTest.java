package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The behaviour every lock type promises, on a real Redis (or, where a subclass says so, another
 * store: the database back end runs it too). A lock type's test extends this and supplies
 * {@link #newLock}. Where a test needs a second owner to contend, the contender is a
 * {@linkplain #newRival rival}: another lock of the type for an exclusive lock, the write lock
 * for a read lock. Tests about holding put the lock under test in the holder's hands; tests
 * about waiting put it in the waiter's.
 */
abstract class LockContractTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    /** Generous bound for anything that should happen "promptly"; never a performance claim. */
    static final Duration PROMPTLY = Duration.ofSeconds(10);

    /**
     * How long a child JVM may take to start and report its first line: a JVM start plus a
     * Relock client's connect, which on a loaded 2-core machine has taken over 10 s. Not what
     * any test checks.
     */
    static final Duration CHILD_START = Duration.ofSeconds(60);

    /** Why a shared lock skips the tests of exclusion among its own holders. */
    private static final String SHARED = "readers share the lock by design: exclusion among its own holders does not"
            + " apply (readers against writers under contention is ReadWriteLockTest's subject)";

    protected RedisServer server;
    protected Backend backend;
    protected Clients clients;
    private Relock inspector;

    @BeforeEach
    void startClients(RedisServer server) {
        this.server = server;
        this.backend = backend(server);
        this.clients = clients(backend);
    }

    /** Where the clients connect: the class's server unless a subclass runs on another topology. */
    protected Backend backend(RedisServer server) {
        return Backend.single(server);
    }

    /** The clients' factory: Relock clients of the backend unless a subclass runs on another store. */
    protected Clients clients(Backend backend) {
        return new Clients(backend);
    }

    /** How many locks the store keeps now, whether held or not (Redis: keys apart from client entries). */
    protected long storedLocks() {
        return backend.dbSize();
    }

    /** How many clients still wait for the lock {@code name} (Redis: subscribed to its channel). */
    protected long waitersLeft(String name) {
        return redisWaiters(name);
    }

    @AfterEach
    void closeClients() {
        clients.close();
        inspector = null;
    }

    protected abstract DistributedLock newLock(Relock client, String name);

    /** Whether the owner may acquire the lock again while holding it. */
    protected boolean reentrant() {
        return true;
    }

    /**
     * Whether two owners exclude each other on this lock. A shared lock skips the tests that
     * are about exclusion among its own holders; its exclusion of (and by) rivals is tested.
     */
    protected boolean exclusive() {
        return true;
    }

    /**
     * A lock on the same name that another owner cannot hold while one holds the lock under
     * test, nor acquire while one holds it: by default another lock of the same type.
     */
    protected DistributedLock newRival(Relock client, String name) {
        return newLock(client, name);
    }

    /** Returns once some other client is waiting for the lock (subscribed to its channel). */
    protected void awaitWaiting(String name) {
        awaitSubscribed(name);
    }

    /** Returns once some client is subscribed to the lock's unlock channel. */
    protected final void awaitSubscribed(String name) {
        Eventually.await(PROMPTLY, "a waiter subscribed to '" + name + "'", () -> redisWaiters(name) > 0);
    }

    protected DistributedLock newLock(String name) {
        return newLock(clients.create(), name);
    }

    protected DistributedLock newRival(String name) {
        return newRival(clients.create(), name);
    }

    /**
     * A rival of {@code lock} on its client, for another thread or owner id to contend with: the
     * lock object itself when the lock is exclusive, so that one object used by several owners
     * is tested too.
     */
    private DistributedLock rivalOnTheSameClient(Relock client, DistributedLock lock) {
        return exclusive() ? lock : newRival(client, lock.getName());
    }

    private static <T> T inThread(Threads.Body<T> work) throws Exception {
        try {
            return Threads.call(work).get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    @Test
    void mutualExclusionHoldsAcrossClientsAndThreads() throws Exception {
        assumeTrue(exclusive(), SHARED);
        int clientCount = 4;
        int threadsPerClient = 32;
        int rounds = 4;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger counter = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        for (int c = 0; c < clientCount; c++) {
            DistributedLock lock = newLock(clients.create(), "contended");
            for (int t = 0; t < threadsPerClient; t++) {
                threads.add(new Thread(() -> {
                    try {
                        gate.await();
                        for (int i = 0; i < rounds; i++) {
                            lock.lock();
                            try {
                                if (!inside.compareAndSet(false, true)) {
                                    overlaps.incrementAndGet();
                                }
                                int seen = counter.get();
                                Thread.yield();
                                counter.set(seen + 1); // deliberately not atomic: overlaps lose updates
                                inside.set(false);
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
        }
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread thread : threads) {
            thread.join(Duration.ofSeconds(60).toMillis());
            assertThat(thread.isAlive()).as("worker finished").isFalse();
        }
        assertThat(failures).isEmpty();
        assertThat(overlaps.get()).as("overlapping critical sections").isZero();
        assertThat(counter.get()).as("lost updates").isEqualTo(clientCount * threadsPerClient * rounds);
    }

    @Test
    void exactlyOneOfAThousandTryLocksWins() throws Exception {
        assumeTrue(exclusive(), SHARED);
        DistributedLock lock = newLock("race");
        int contenders = 1000;
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch tried = new CountDownLatch(contenders);
        AtomicInteger winners = new AtomicInteger();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    boolean won = lock.tryLock();
                    tried.countDown();
                    if (won) {
                        winners.incrementAndGet();
                        tried.await(); // hold until everyone has tried
                        lock.unlock();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                    tried.countDown();
                }
            }));
        }
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread thread : threads) {
            thread.join(Duration.ofSeconds(60).toMillis());
        }
        assertThat(failures).isEmpty();
        assertThat(winners.get()).isEqualTo(1);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void reentryCountsHoldsAndTheLastUnlockReleases() {
        DistributedLock lock = newLock("reentrant");
        if (!reentrant()) {
            lock.lock();
            assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("reentrant");
            assertThat(lock.getHoldCount()).isEqualTo(1);
            lock.unlock();
            assertThat(lock.isLocked()).isFalse();
            return;
        }
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        lock.lock(5, TimeUnit.SECONDS);
        assertThat(lock.getHoldCount()).isEqualTo(3);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        lock.unlock();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(lock.isLocked()).isTrue();
        lock.unlock();
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.remainTimeToLive()).isEqualTo(-2);
    }

    @Test
    void anotherOwnerCannotEnterWhileHeld() throws Exception {
        Relock client = clients.create();
        DistributedLock lock = newLock(client, "held");
        DistributedLock rivalOfSameClient = rivalOnTheSameClient(client, lock);
        lock.lock();
        boolean otherThreadEntered = inThread(() -> rivalOfSameClient.tryLock());
        assertThat(otherThreadEntered).isFalse();
        assertThat(newRival("held").tryLock()).as("other client").isFalse();
        lock.unlock();
        assertThat(newRival("held").tryLock()).isTrue();
    }

    @Test
    void anExpiredLeaseFreesTheLockAndTheLateUnlockSaysSo() throws Exception {
        DistributedLock first = newLock("lease");
        DistributedLock second = newRival("lease");
        assertThat(first.tryLock(0, 200, TimeUnit.MILLISECONDS)).isTrue();
        long ttl = first.remainTimeToLive();
        assertThat(ttl).isBetween(1L, 200L);
        assertThat(inThread(() -> second.tryLock(PROMPTLY.toMillis(), 10_000, TimeUnit.MILLISECONDS))).isTrue();
        assertThatThrownBy(first::unlock)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("lease")
                .hasMessageContaining("lease of 200 ms ran out");
    }

    @Test
    void tryLockWithWaitGivesUpAfterAboutTheWait() throws Exception {
        DistributedLock lock = newRival("busy");
        lock.lock();
        DistributedLock other = newLock("busy");
        long start = System.nanoTime();
        boolean acquired = inThread(() -> other.tryLock(300, TimeUnit.MILLISECONDS));
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(acquired).isFalse();
        assertThat(elapsedMillis).isGreaterThanOrEqualTo(300).isLessThan(PROMPTLY.toMillis());
        // UNSUBSCRIBE travels on the waiter's pub/sub connection; Redis may read it after this query.
        Eventually.await(PROMPTLY, "no subscription left", () -> waitersLeft("busy") == 0);
    }

    @Test
    void aWaiterAcquiresWhenTheHolderUnlocks() throws Exception {
        DistributedLock lock = newRival("handoff");
        lock.lock();
        DistributedLock other = newLock("handoff");
        CompletableFuture<Boolean> waiter = Threads.call(() -> other.tryLock(30, TimeUnit.SECONDS));
        awaitWaiting("handoff");
        lock.unlock();
        // The holder's lease is 30 s: acquiring well before that proves the unlock message woke it.
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void interruptingAWaiterThrowsAndLeavesNoSubscription() throws Exception {
        DistributedLock lock = newRival("interrupted");
        lock.lock();
        DistributedLock other = newLock("interrupted");
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                other.lockInterruptibly();
                outcome.set(new AssertionError("acquired a held lock"));
            } catch (Throwable t) {
                outcome.set(t);
            } finally {
                done.countDown();
            }
        });
        waiter.start();
        awaitWaiting("interrupted");
        waiter.interrupt();
        assertThat(done.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        assertThat(other.isHeldByThread(waiter.getId())).isFalse();
        Eventually.await(PROMPTLY, "no subscription left", () -> waitersLeft("interrupted") == 0);
        lock.unlock();
    }

    @Test
    void anInterruptedThreadDoesNotStartWaiting() {
        DistributedLock lock = newLock("flagged");
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void lockIsNotInterruptibleButKeepsTheInterrupt() throws Exception {
        DistributedLock lock = newLock("uninterruptible");
        Thread.currentThread().interrupt();
        lock.lock();
        assertThat(Thread.interrupted()).as("interrupt flag kept").isTrue();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    @Test
    void unlockByAnotherThreadThrowsNamingTheLock() throws Exception {
        DistributedLock lock = newLock("mine");
        lock.lock();
        Future<?> attempt = Threads.run(() -> {
            lock.unlock();
            return null;
        });
        assertThatThrownBy(() -> attempt.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(IllegalMonitorStateException.class)
                .cause().hasMessageContaining("mine");
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    @Test
    void unlockingTwiceThrows() {
        DistributedLock lock = newLock("twice");
        lock.lock();
        lock.unlock();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("twice");
    }

    @Test
    void forceUnlockReleasesAnyHolderAndWakesWaiters() throws Exception {
        DistributedLock holder = newLock("forced");
        holder.lock();
        if (reentrant()) {
            holder.lock();
        }
        DistributedLock waiterLock = newRival("forced");
        CompletableFuture<Boolean> waiter = Threads.call(() -> waiterLock.tryLock(30, TimeUnit.SECONDS));
        awaitRivalWaiting("forced");
        assertThat(newLock("forced").forceUnlock()).isTrue();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(newLock("free").forceUnlock()).isFalse();
    }

    @Test
    void waitOfZeroOrLessIsOneAttempt() throws Exception {
        DistributedLock lock = newRival("once");
        lock.lock();
        DistributedLock other = newLock("once");
        assertThat(inThread(() -> other.tryLock(0, TimeUnit.SECONDS))).isFalse();
        assertThat(inThread(() -> other.tryLock(-5, TimeUnit.SECONDS))).isFalse();
        assertThat(inThread(() -> other.tryLock(Long.MIN_VALUE, 1, TimeUnit.SECONDS))).isFalse();
        lock.unlock();
        assertThat(inThread(() -> other.tryLock(0, TimeUnit.SECONDS))).isTrue();
    }

    @Test
    void aHugeWaitWaitsWithoutOverflowing() throws Exception {
        DistributedLock lock = newRival("huge-wait");
        lock.lock();
        DistributedLock other = newLock("huge-wait");
        CompletableFuture<Boolean> waiter = Threads.call(() -> other.tryLock(Long.MAX_VALUE, TimeUnit.DAYS));
        awaitWaiting("huge-wait");
        assertThat(waiter).isNotDone();
        lock.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void leaseOfMinusOneMeansTheWatchdogRenews() throws Exception {
        long lease = Clients.SHORT_WATCHDOG.toMillis();
        Relock client = clients.create(Clients.SHORT_WATCHDOG);
        Renewals renewals = new Renewals();
        client.addObserver(renewals);
        DistributedLock lock = newLock(client, "watched");
        assertThat(lock.tryLock(0, -1, TimeUnit.MILLISECONDS)).isTrue();
        long acquired = System.nanoTime();
        assertThat(lock.remainTimeToLive()).as("the initial lease is the watchdog timeout").isBetween(1L, lease);
        // Unrenewed, the lease ends at most `lease` ms after the acquire returned: its time to live
        // stays at or below `lease` minus the time since (read first, so it is not overstated).
        Eventually.await(PROMPTLY, "the lease of '" + lock.getName() + "' extended past its initial end", () -> {
            long since = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquired);
            return lock.remainTimeToLive() > Math.max(0, lease - since);
        });
        assertThat(renewals.first.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS).renewed())
                .as("holds the client's watchdog renewed in one tick").isPositive();
        assertThat(renewals.lost).as("holds the watchdog lost").hasValue(0);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    /** The first watchdog tick of a client that renewed something, and the holds its ticks lost. */
    private static final class Renewals implements LockObserver {

        final CompletableFuture<WatchdogTickEvent> first = new CompletableFuture<>();
        final AtomicInteger lost = new AtomicInteger();

        @Override
        public void onWatchdogTick(WatchdogTickEvent tick) {
            lost.addAndGet(tick.lost());
            if (tick.renewed() > 0) {
                first.complete(tick);
            }
        }
    }

    @Test
    void badLeasesAndUnitsAreRejectedBeforeTouchingRedis() {
        DistributedLock lock = newLock("bad-input");
        assertThatThrownBy(() -> lock.lock(0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> lock.lock(-2, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> lock.tryLock(1, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> lock.lock(Long.MAX_VALUE, TimeUnit.DAYS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows");
        assertThatThrownBy(() -> lock.lockInterruptibly(500, TimeUnit.MICROSECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> lock.lock(1, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("unit");
        assertThatThrownBy(() -> lock.tryLock(1, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("unit");
        assertThatThrownBy(() -> lock.tryLockAsync(1, 0, TimeUnit.SECONDS, 7))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThat(storedLocks()).isEqualTo(0L);
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> newLock("no-conditions").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("no-conditions");
    }

    @Test
    void asyncFormsUseTheGivenOwner() throws Exception {
        Relock client = clients.create();
        DistributedLock lock = newLock(client, "async");
        DistributedLock rival = rivalOnTheSameClient(client, lock);
        lock.lockAsync(101).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isHeldByThread(101)).isTrue();
        assertThat(rival.tryLockAsync(102).toCompletableFuture().get()).isFalse();
        assertThatThrownBy(() -> lock.unlockAsync(102).toCompletableFuture().get())
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
        CompletableFuture<Boolean> rivalWaiting =
                rival.tryLockAsync(30, -1, TimeUnit.SECONDS, 102).toCompletableFuture();
        lock.unlockAsync(101).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(rivalWaiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(rival.isHeldByThread(102)).isTrue();
        CompletableFuture<Boolean> waiting =
                lock.tryLockAsync(30, -1, TimeUnit.SECONDS, 101).toCompletableFuture();
        rival.unlockAsync(102).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(lock.isHeldByThread(101)).isTrue();
        if (reentrant()) {
            lock.lockAsync(1, TimeUnit.SECONDS, 101).toCompletableFuture().get();
            assertThat(lock.isHeldByThread(101)).isTrue();
            lock.unlockAsync(101).toCompletableFuture().get();
        }
        lock.unlockAsync(101).toCompletableFuture().get();
        assertThat(lock.isLocked()).isFalse();
    }

    /**
     * Returns once a {@linkplain #newRival rival} waits for the lock. The rival of an exclusive
     * lock is of the same type; a shared lock's rival (a write lock) waits subscribed.
     */
    protected void awaitRivalWaiting(String name) {
        if (exclusive()) {
            awaitWaiting(name);
        } else {
            awaitSubscribed(name);
        }
    }

    /**
     * For locks that wait without pub/sub: a waiter is seen by its attempts, so this returns
     * once Redis has run at least two more scripts.
     */
    protected void awaitRetries(String name) {
        long before = backend.calls("evalsha");
        Eventually.await(PROMPTLY, "a retrying waiter on '" + name + "'",
                () -> backend.calls("evalsha") >= before + 2);
    }

    /** Clients subscribed to the lock's unlock channel, as Redis counts them. */
    protected final long redisWaiters(String name) {
        if (inspector == null) {
            inspector = clients.create();
        }
        return inspector.getLockInfo(name).waitingClients();
    }
}
