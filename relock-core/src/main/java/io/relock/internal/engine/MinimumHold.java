package io.relock.internal.engine;

import io.relock.ReleaseEvent;
import io.relock.RelockException;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The release with a minimum hold ({@link io.relock.DistributedLock#unlock(Duration)}): when the
 * owner's last hold has lasted less than the minimum, the hold is not released but kept on Redis
 * for the rest of it ({@code lock_keep.lua} sets the lease to what is left, only while the owner
 * holds it) and this client forgets it: no renewal, no hand-over, no loss reported. Otherwise
 * (the minimum passed, a re-entry, a lost hold) it is the ordinary {@link LockEngine#release}.
 * The minimum counts from when this client recorded the hold, by its clock: no earlier than the
 * lease began on Redis, so the lock is never kept for less than asked.
 */
final class MinimumHold {

    private MinimumHold() {}

    /** Checks a minimum hold before anything is sent, and gives it in nanoseconds. */
    static long nanos(Duration holdAtLeast) {
        Args.notNull(holdAtLeast, "holdAtLeast");
        Args.require(!holdAtLeast.isNegative(), "holdAtLeast must not be negative: %s", holdAtLeast);
        // Longer than any lease Redis takes; saturating keeps the sums below from overflowing.
        return holdAtLeast.compareTo(Duration.ofDays(365L * 100)) > 0 ? Args.FOREVER_NANOS : holdAtLeast.toNanos();
    }

    /** Releases one hold of {@code owner}, keeping the last one until {@code holdAtLeastNanos} after it began. */
    static CompletableFuture<Void> release(LockEngine lock, long owner, long holdAtLeastNanos) {
        LockClient runtime = lock.client;
        runtime.checkOpen();
        if (!lock.driver().keepsMinimumHold()) {
            // A read hold shares the key with other readers: its lease is not the lock's to set.
            throw new UnsupportedOperationException("a " + lock.type() + " lock ('" + lock.getName()
                    + "') cannot be released with a minimum hold; use unlock()");
        }
        Hold hold = runtime.watchdog().get(lock, owner);
        if (hold != null && hold.writePending()) {
            // As a release: nothing about the hold overtakes the write that made it.
            return hold.pending.thenCompose(ignored -> release(lock, owner, holdAtLeastNanos));
        }
        if (hold == null || hold.lost || hold.count != 1) {
            return lock.release(owner);
        }
        long now = runtime.nanoTime();
        long leftNanos = holdAtLeastNanos - (now - hold.acquiredAtNanos);
        long leftMillis = leftNanos <= 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(leftNanos + 999_999);
        if (!hold.watchdog) {
            // A fixed lease is the longest the lock is held (ShedLock's lockAtMostFor).
            leftMillis = Math.min(leftMillis, hold.leaseLeftMillis(now));
        }
        if (leftMillis <= 0) {
            return lock.release(owner);
        }
        long kept = leftMillis;
        // Forgotten first, then past the renewals in flight: none sets the longer lease again after ours.
        runtime.watchdog().forget(hold);
        return runtime.watchdog().settled()
                .thenCompose(ignored -> lock.driver().keep(hold.field, kept))
                .handle((outcome, error) -> settle(lock, hold, kept, outcome, error));
    }

    private static Void settle(LockEngine lock, Hold hold, long keptMillis, Long outcome, Throwable error) {
        LockClient runtime = lock.client;
        // Waiters of this client parked behind the hold wait for no hand-over now: they ask Redis.
        lock.holdLost();
        if (error != null) {
            // The hold is no longer renewed: it ends with its lease, as it would have when kept.
            throw new RelockException(lock.describe("unlock") + " keeping it held for " + keptMillis
                    + " ms more failed; it is no longer renewed and ends with its lease (at most "
                    + hold.leaseMillis + " ms from its last renewal); unlock() may still release it: "
                    + Exceptions.unwrap(error), Exceptions.unwrap(error));
        }
        if (outcome == null || outcome != 1) {
            runtime.released(hold, ReleaseEvent.Outcome.LOST);
            Throwable cause = outcome != null && outcome == 2 ? Exceptions.forceUnlocked(lock.getName(), hold.field)
                    : hold.lossCause;
            throw Exceptions.holdLost(lock.getName(), hold.field, hold.leaseMillis, hold.watchdog, cause);
        }
        // For observers the owner's hold ends here; Redis keeps the lock until the lease runs out.
        runtime.released(hold, ReleaseEvent.Outcome.RELEASED);
        return null;
    }
}
