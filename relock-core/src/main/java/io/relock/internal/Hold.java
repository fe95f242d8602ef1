package io.relock.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What this client knows of one owner's hold on one lock: enough to renew it, to tell
 * listeners when it is lost, to explain a failed unlock, and the hold count a release starts
 * from (which lets a release script recognise its own repeat). Redis stays the authority on
 * whether a lock is held.
 */
final class Hold {

    final WatchedLock lock;
    final long owner;
    final String field;
    final long leaseMillis;
    final boolean watchdog;
    /** The owner thread's name when it acquired for itself, else null (an async owner id). */
    final String ownerThreadName;
    /** When the first hold was taken: nanoTime for durations, the wall clock for people. */
    final long acquiredAtNanos;
    final long acquiredAtMillis;

    /** Releases in flight: a renewal that finds the lock gone meanwhile is no loss. */
    final AtomicInteger releasing = new AtomicInteger();

    /** When the lease last started: the acquire, the last renewal, or the loss. */
    volatile long renewedAtNanos;
    /** Holds of this owner as of its last acquire or release; only the owner changes it. */
    volatile int count;
    volatile boolean lost;
    volatile Throwable lossCause;

    Hold(WatchedLock lock, long owner, String field, long leaseMillis, boolean watchdog, String ownerThreadName,
            long nowNanos) {
        this.lock = lock;
        this.owner = owner;
        this.field = field;
        this.leaseMillis = leaseMillis;
        this.watchdog = watchdog;
        this.ownerThreadName = ownerThreadName;
        this.renewedAtNanos = nowNanos;
        this.acquiredAtNanos = nowNanos;
        this.acquiredAtMillis = System.currentTimeMillis();
    }
}
