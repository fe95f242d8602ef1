package io.relock.internal.multi;

import io.relock.DistributedLock;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * All-or-nothing over several locks, which may live on different clients and servers. Members
 * are taken one after another in a global order (server, then key), so two multi-locks over
 * overlapping sets cannot deadlock; the whole acquire shares one deadline; on failure what was
 * taken is released in reverse.
 */
public final class MultiRedisLock extends CompositeLock {

    public MultiRedisLock(DistributedLock... locks) {
        super("multi", locks);
        for (int i = 1; i < members.size(); i++) {
            LockEngine previous = members.get(i - 1);
            LockEngine current = members.get(i);
            Args.require(!(previous.client == current.client && previous.key().equals(current.key())),
                    "locks contains '%s' twice", current.getName());
        }
    }

    /** Takes every member within one deadline, or none. */
    @Override
    protected boolean acquire(long waitNanos, long leaseMillis) throws InterruptedException {
        long start = clock();
        List<LockEngine> taken = new ArrayList<>();
        try {
            for (LockEngine member : members) {
                long elapsed = clock() - start;
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

    private static void releaseInReverse(List<LockEngine> taken, Throwable failure) {
        long owner = LockEngine.currentThreadId();
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
    public CompletionStage<Void> unlockAsync(long ownerId) {
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (int i = members.size() - 1; i >= 0; i--) {
            releases.add(members.get(i).release(ownerId));
        }
        // Every member is released even if one fails; the first failure is reported.
        return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).handle((ignored, error) -> {
            if (error != null) {
                throw Exceptions.translate("unlock " + getName(), error);
            }
            return null;
        });
    }

    @Override
    public boolean forceUnlock() {
        boolean any = false;
        for (LockEngine member : members) {
            any |= member.forceUnlock();
        }
        return any;
    }

    /** Whether any member is held: the multi-lock as a whole cannot be taken now. */
    @Override
    public boolean isLocked() {
        return members.stream().anyMatch(LockEngine::isLocked);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return members.stream().allMatch(LockEngine::isHeldByCurrentThread);
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        return members.stream().allMatch(member -> member.isHeldByThread(threadId));
    }

    /** The smallest hold count over the members: how often the whole set is held. */
    @Override
    public int getHoldCount() {
        return members.stream().mapToInt(LockEngine::getHoldCount).min().orElse(0);
    }

    /** The shortest remaining lease over the members; -2 if any member is free. */
    @Override
    public long remainTimeToLive() {
        long shortest = Long.MAX_VALUE;
        for (LockEngine member : members) {
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
    protected CompletableFuture<Boolean> acquireAsync(long owner, long waitNanos, long leaseMillis) {
        long start = clock();
        return acquireFrom(0, owner, start, waitNanos, leaseMillis);
    }

    private CompletableFuture<Boolean> acquireFrom(int index, long owner, long start, long waitNanos, long leaseMillis) {
        if (index == members.size()) {
            return CompletableFuture.completedFuture(true);
        }
        long elapsed = clock() - start;
        long left = elapsed >= waitNanos ? 0 : waitNanos - elapsed;
        LockEngine member = members.get(index);
        return member.acquireAsync(owner, left, leaseMillis).thenCompose(attempt -> {
            if (!attempt.acquired()) {
                return releaseFrom(index - 1, owner).thenApply(ignored -> false);
            }
            return acquireFrom(index + 1, owner, start, waitNanos, leaseMillis).exceptionallyCompose(error ->
                    member.release(owner).handle((ignored, releaseError) -> {
                        throw Exceptions.translate("acquire " + getName(), error);
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
}
