package io.relock.internal;

import io.relock.DistributedLock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * All-or-nothing over several locks, which may live on different clients and servers. Members
 * are taken one after another in a global order (server, then key), so two multi-locks over
 * overlapping sets cannot deadlock; the whole acquire shares one deadline; on failure what was
 * taken is released in reverse. {@code lock()} retries in rounds with a jittered deadline.
 */
public final class MultiRedisLock implements DistributedLock {

    /** Per member and round, how long {@code lock()} waits before releasing and retrying. */
    private static final long ROUND_MILLIS_PER_MEMBER = 1500;

    private final List<LockBase> members;
    private final String name;

    public MultiRedisLock(DistributedLock... locks) {
        Args.notNull(locks, "locks");
        Args.require(locks.length > 0, "locks must not be empty");
        List<LockBase> list = new ArrayList<>();
        for (int i = 0; i < locks.length; i++) {
            DistributedLock lock = Args.notNull(locks[i], "locks[" + i + "]");
            Args.require(lock instanceof LockBase, "locks[%s] is not a Relock lock: %s", i, lock);
            list.add((LockBase) lock);
        }
        list.sort(Comparator.comparing((LockBase lock) -> lock.runtime.gateway().target()).thenComparing(LockBase::key));
        for (int i = 1; i < list.size(); i++) {
            LockBase previous = list.get(i - 1);
            LockBase current = list.get(i);
            Args.require(!(previous.runtime == current.runtime && previous.key().equals(current.key())),
                    "locks contains '%s' twice", current.getName());
        }
        this.members = List.copyOf(list);
        this.name = "multi" + members.stream().map(LockBase::getName).toList();
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public void lock() {
        lockInRounds(Args.WATCHDOG_LEASE);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        lockInRounds(Args.leaseMillis(leaseTime, unit));
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
        while (!acquireAll(roundNanos(), leaseMillis)) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while acquiring " + name);
            }
        }
    }

    private void lockInRounds(long leaseMillis) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (acquireAll(roundNanos(), leaseMillis)) {
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

    private long roundNanos() {
        long base = ROUND_MILLIS_PER_MEMBER * members.size();
        // Jitter, so that two contenders that both gave up do not retry in lockstep.
        return TimeUnit.MILLISECONDS.toNanos(base + ThreadLocalRandom.current().nextLong(base));
    }

    @Override
    public boolean tryLock() {
        boolean interrupted = Thread.interrupted();
        try {
            return acquireAll(0, Args.WATCHDOG_LEASE);
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
        return acquireAll(Args.waitNanos(waitTime, unit), Args.WATCHDOG_LEASE);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireAll(Args.waitNanos(waitTime, unit), lease);
    }

    /** Takes every member within one deadline, or none. */
    private boolean acquireAll(long waitNanos, long leaseMillis) throws InterruptedException {
        long start = System.nanoTime();
        List<LockBase> taken = new ArrayList<>();
        try {
            for (LockBase member : members) {
                long elapsed = System.nanoTime() - start;
                long left = elapsed >= waitNanos ? 0 : waitNanos - elapsed;
                if (!member.acquireInterruptibly(left, leaseMillis).acquired()) {
                    releaseInReverse(taken, null);
                    return false;
                }
                taken.add(member);
            }
            return true;
        } catch (InterruptedException | RuntimeException e) {
            releaseInReverse(taken, e);
            throw e;
        }
    }

    private static void releaseInReverse(List<LockBase> taken, Throwable failure) {
        long owner = LockBase.currentThreadId();
        for (int i = taken.size() - 1; i >= 0; i--) {
            try {
                Futures.await(taken.get(i).release(owner), "release " + taken.get(i).getName());
            } catch (RuntimeException e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                }
            }
        }
    }

    @Override
    public void unlock() {
        Futures.await(unlockAsync(LockBase.currentThreadId()).toCompletableFuture(), "unlock " + name);
    }

    @Override
    public CompletionStage<Void> unlockAsync(long ownerThreadId) {
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (int i = members.size() - 1; i >= 0; i--) {
            releases.add(members.get(i).release(ownerThreadId));
        }
        // Every member is released even if one fails; the first failure is reported.
        return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).handle((ignored, error) -> {
            if (error != null) {
                throw Exceptions.translate("unlock " + name, error);
            }
            return null;
        });
    }

    @Override
    public boolean forceUnlock() {
        boolean any = false;
        for (LockBase member : members) {
            any |= member.forceUnlock();
        }
        return any;
    }

    /** Whether any member is held: the multi-lock as a whole cannot be taken now. */
    @Override
    public boolean isLocked() {
        return members.stream().anyMatch(LockBase::isLocked);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return members.stream().allMatch(LockBase::isHeldByCurrentThread);
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        return members.stream().allMatch(member -> member.isHeldByThread(threadId));
    }

    /** The smallest hold count over the members: how often the whole set is held. */
    @Override
    public int getHoldCount() {
        return members.stream().mapToInt(LockBase::getHoldCount).min().orElse(0);
    }

    /** The shortest remaining lease over the members; -2 if any member is free. */
    @Override
    public long remainTimeToLive() {
        long shortest = Long.MAX_VALUE;
        for (LockBase member : members) {
            long ttl = member.remainTimeToLive();
            if (ttl == -2) {
                return -2;
            }
            if (ttl >= 0) {
                shortest = Math.min(shortest, ttl);
            }
        }
        return shortest == Long.MAX_VALUE ? -1 : shortest;
    }

    @Override
    public CompletionStage<Void> lockAsync(long ownerThreadId) {
        return lockAsync(Args.WATCHDOG_LEASE, ownerThreadId);
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerThreadId) {
        return lockAsync(Args.leaseMillis(leaseTime, unit), ownerThreadId);
    }

    private CompletableFuture<Void> lockAsync(long leaseMillis, long owner) {
        return acquireAllAsync(owner, roundNanos(), leaseMillis)
                .thenCompose(acquired -> acquired ? CompletableFuture.completedFuture(null) : lockAsync(leaseMillis, owner));
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerThreadId) {
        return acquireAllAsync(ownerThreadId, 0, Args.WATCHDOG_LEASE);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerThreadId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireAllAsync(ownerThreadId, Args.waitNanos(waitTime, unit), lease);
    }

    private CompletableFuture<Boolean> acquireAllAsync(long owner, long waitNanos, long leaseMillis) {
        long start = System.nanoTime();
        return acquireFrom(0, owner, start, waitNanos, leaseMillis);
    }

    private CompletableFuture<Boolean> acquireFrom(int index, long owner, long start, long waitNanos, long leaseMillis) {
        if (index == members.size()) {
            return CompletableFuture.completedFuture(true);
        }
        long elapsed = System.nanoTime() - start;
        long left = elapsed >= waitNanos ? 0 : waitNanos - elapsed;
        LockBase member = members.get(index);
        return member.acquireAsync(owner, left, leaseMillis).thenCompose(attempt -> {
            if (!attempt.acquired()) {
                return releaseFrom(index - 1, owner).thenApply(ignored -> false);
            }
            return acquireFrom(index + 1, owner, start, waitNanos, leaseMillis).exceptionallyCompose(error ->
                    member.release(owner).handle((ignored, releaseError) -> {
                        throw Exceptions.translate("acquire " + name, error);
                    }));
        });
    }

    private CompletableFuture<Void> releaseFrom(int index, long owner) {
        if (index < 0) {
            return CompletableFuture.completedFuture(null);
        }
        return members.get(index).release(owner).handle((ignored, error) -> null)
                .thenCompose(ignored -> releaseFrom(index - 1, owner));
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(name + " has no conditions");
    }

    @Override
    public String toString() {
        return "MultiRedisLock" + members.stream().map(LockBase::getName).toList();
    }
}
