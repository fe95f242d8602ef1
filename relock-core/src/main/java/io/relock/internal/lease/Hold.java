package io.relock.internal.lease;

import io.relock.ReleaseEvent;
import io.relock.internal.support.Observers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What this client knows of one owner's hold on one lock: enough to renew it, to tell
 * listeners when it is lost, to explain a failed unlock, and the hold count a release starts
 * from (which lets a release script recognise its own repeat). Redis stays the authority on
 * whether a lock is held.
 */
public final class Hold {

    public final WatchedLock lock;
    public final long owner;
    public final String field;
    public final long leaseMillis;
    public final boolean watchdog;
    /** The owner thread's name when it acquired for itself, else null (an async owner id). */
    public final String ownerThreadName;
    /** When the first hold was taken: nanoTime for durations, the wall clock for people. */
    public final long acquiredAtNanos;
    public final long acquiredAtMillis;

    /** Releases in flight: a renewal that finds the lock gone meanwhile is no loss. */
    public final AtomicInteger releasing = new AtomicInteger();

    /**
     * When the lease last started: when the acquire (or the hand-over that made this hold) was
     * sent, the last renewal was sent, or the loss. The lease on Redis started no earlier.
     */
    public volatile long renewedAtNanos;
    /**
     * When the owner was told it held before Redis answered the write that made this hold (a
     * hand-over from another owner of this client, or a claim sent without waiting): completes
     * (never exceptionally) once that write is answered and what it brought (a loss, an undo) is
     * done; else null. The
     * owner's later writes about the lock (re-entries, releases, renewals) wait for it, so none
     * overtakes it, nor changes the count that a retry of it after a reconnect judges by.
     */
    public volatile CompletableFuture<Void> pending;
    /** Holds of this owner as of its last acquire or release; only the owner changes it. */
    public volatile int count;
    public volatile boolean lost;
    public volatile Throwable lossCause;

    public Hold(WatchedLock lock, long owner, String field, long leaseMillis, boolean watchdog, String ownerThreadName,
            long leaseStartNanos, long nowNanos) {
        this.lock = lock;
        this.owner = owner;
        this.field = field;
        this.leaseMillis = leaseMillis;
        this.watchdog = watchdog;
        this.ownerThreadName = ownerThreadName;
        this.renewedAtNanos = leaseStartNanos;
        this.acquiredAtNanos = nowNanos;
        this.acquiredAtMillis = System.currentTimeMillis();
    }

    /** Whether a write that made this hold is still on its way (see {@link #pending}). */
    public boolean writePending() {
        CompletableFuture<?> write = pending;
        return write != null && !write.isDone();
    }

    /** Tells {@code observers} that this hold ended at {@code nowNanos}, as {@code outcome} says. */
    public void released(Observers observers, long nowNanos, ReleaseEvent.Outcome outcome) {
        if (observers.any()) {
            observers.released(new ReleaseEvent(lock.getName(), lock.type(), owner, nowNanos - acquiredAtNanos,
                    outcome));
        }
    }

    /** How much of the lease is surely left at {@code nowNanos}, by this client's clock. */
    public long leaseLeftMillis(long nowNanos) {
        return leaseMillis - TimeUnit.NANOSECONDS.toMillis(nowNanos - renewedAtNanos);
    }
}
