package io.relock.internal.multi;

import io.relock.DistributedLock;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.internal.engine.EngineBacked;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.support.Args;
import io.relock.internal.support.Futures;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the multi-lock and RedLock share: checked members in a global order (server, then key),
 * and the entry points of {@link DistributedLock} expressed through one bounded acquire.
 * {@code lock()} retries that acquire in rounds with a jittered deadline, so two contenders that
 * each got part of the members give everything back instead of waiting for each other forever.
 */
abstract class CompositeLock implements DistributedLock {

    private static final Logger LOG = LoggerFactory.getLogger(CompositeLock.class);

    /** Per member and round, how long {@code lock()} waits before releasing and retrying. */
    private static final long ROUND_MILLIS_PER_MEMBER = 1500;

    protected final List<LockEngine> members;
    private final String name;

    CompositeLock(String kind, DistributedLock... locks) {
        Args.notNull(locks, "locks");
        Args.require(locks.length > 0, "locks must not be empty");
        List<LockEngine> list = new ArrayList<>();
        for (int i = 0; i < locks.length; i++) {
            DistributedLock lock = Args.notNull(locks[i], "locks[" + i + "]");
            Args.require(lock instanceof EngineBacked, "locks[%s] is not a Relock lock: %s", i, lock);
            list.add(((EngineBacked) lock).engine());
        }
        list.sort(Comparator.comparing((LockEngine lock) -> lock.client.target()).thenComparing(LockEngine::key));
        this.members = List.copyOf(list);
        this.name = kind + members.stream().map(LockEngine::getName).toList();
    }

    /** Takes the lock for the calling thread within {@code waitNanos}, or takes nothing. */
    protected abstract boolean acquire(long waitNanos, long leaseMillis) throws InterruptedException;

    /** Takes the lock for {@code owner} within {@code waitNanos}, or takes nothing. */
    protected abstract CompletableFuture<Boolean> acquireAsync(long owner, long waitNanos, long leaseMillis);

    @Override
    public String getName() {
        return name;
    }

    /** The first member's client's clock: every deadline of a multi-lock or RedLock is measured on it. */
    protected final long clock() {
        return members.get(0).client.nanoTime();
    }

    private long roundNanos() {
        long base = ROUND_MILLIS_PER_MEMBER * members.size();
        return TimeUnit.MILLISECONDS.toNanos(base + ThreadLocalRandom.current().nextLong(base));
    }

    @Override
    public void lock() {
        lockInRounds(Args.WATCHDOG_LEASE);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        lockInRounds(Args.leaseMillis(leaseTime, unit));
    }

    private void lockInRounds(long leaseMillis) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (acquire(roundNanos(), leaseMillis)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInRoundsInterruptibly(Args.WATCHDOG_LEASE);
    }

    @Override
    public void lockInterruptibly(long leaseTime, TimeUnit unit) throws InterruptedException {
        lockInRoundsInterruptibly(Args.leaseMillis(leaseTime, unit));
    }

    private void lockInRoundsInterruptibly(long leaseMillis) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + name);
        }
        while (!acquire(roundNanos(), leaseMillis)) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while acquiring " + name);
            }
        }
    }

    @Override
    public boolean tryLock() {
        boolean interrupted = Thread.interrupted(); // one attempt ignores interrupts, as Lock.tryLock() does
        try {
            return acquire(0, Args.WATCHDOG_LEASE);
        } catch (InterruptedException e) {
            interrupted = true;
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean tryLock(long waitTime, TimeUnit unit) throws InterruptedException {
        return tryLock(waitTime, Args.WATCHDOG_LEASE, unit);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = Args.leaseMillis(leaseTime, unit);
        long waitNanos = Args.waitNanos(waitTime, unit);
        // Lock.tryLock(time, unit): an interrupt on entry throws even when the lock is free (a
        // RedLock's quick win would otherwise complete before the interrupt is looked at).
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + name);
        }
        return acquire(waitNanos, lease);
    }

    @Override
    public void unlock() {
        Futures.await(unlockAsync(LockEngine.currentThreadId()).toCompletableFuture(), "unlock " + name);
    }

    @Override
    public CompletionStage<Void> lockAsync(long ownerId) {
        return cancellable(ownerId, cancelled -> lockInRoundsAsync(ownerId, Args.WATCHDOG_LEASE, cancelled),
                acquired -> null);
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return cancellable(ownerId, cancelled -> lockInRoundsAsync(ownerId, lease, cancelled),
                acquired -> null);
    }

    /** Rounds until one acquires, or until the caller cancelled: then no new round starts. */
    private CompletableFuture<Boolean> lockInRoundsAsync(long owner, long leaseMillis, AtomicBoolean cancelled) {
        return acquireAsync(owner, roundNanos(), leaseMillis).thenCompose(acquired ->
                acquired || cancelled.get() ? CompletableFuture.completedFuture(acquired)
                        : lockInRoundsAsync(owner, leaseMillis, cancelled));
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerId) {
        return cancellable(ownerId, cancelled -> acquireAsync(ownerId, 0, Args.WATCHDOG_LEASE),
                acquired -> acquired);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        long waitNanos = Args.waitNanos(waitTime, unit);
        return cancellable(ownerId, cancelled -> acquireAsync(ownerId, waitNanos, lease),
                acquired -> acquired);
    }

    /**
     * An async acquire its caller may cancel: the round under way runs to its end, none
     * follows, and what it won is released (see {@link Futures#cancellable}).
     */
    private <T> CompletableFuture<T> cancellable(long owner, Function<AtomicBoolean, CompletableFuture<Boolean>> rounds,
            Function<Boolean, T> result) {
        AtomicBoolean cancelled = new AtomicBoolean();
        return Futures.cancellable(rounds.apply(cancelled), result, () -> cancelled.set(true), acquired -> {
            if (acquired) {
                unlockAsync(owner).whenComplete((released, error) -> {
                    if (error != null) {
                        LOG.warn("could not release {} won by a cancelled acquire of owner {} ({}); its members end"
                                + " with their leases", name, owner, error.toString());
                    }
                });
            }
        });
    }

    @Override
    public ListenerRegistration addLostListener(long ownerId, LockListener listener) {
        Args.notNull(listener, "listener");
        List<ListenerRegistration> registrations = new ArrayList<>();
        for (LockEngine member : members) {
            registrations.add(member.client.addLostListener(member.getName(), ownerId, listener));
        }
        return () -> registrations.forEach(ListenerRegistration::close);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(name + " has no conditions");
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + name;
    }
}
