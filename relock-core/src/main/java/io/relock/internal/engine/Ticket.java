package io.relock.internal.engine;

import java.util.concurrent.ThreadLocalRandom;

/**
 * One waiter's ticket (its place in the lock's queue on Redis, see {@link Turn}) as its
 * {@link Acquisition} knows it: the ticket its last attempt queued with, when that attempt was
 * sent, whether its reply is still out, and whether a grant to the ticket was heard since.
 */
final class Ticket {

    /** The ticket of the last attempt, 0 if it did not queue. Guarded by this. */
    private long current;
    /** When the attempt that queued {@link #current} was sent. Guarded by this. */
    private long sentNanos;
    /** An attempt was sent and its reply is not in yet. Guarded by this. */
    private boolean inFlight;
    /** A grant published the current ticket since its attempt began: the next attempt claims the lock. */
    private volatile boolean heard;

    /** A new ticket: a random number of 2 or more, so that it never reads as an unlock message. */
    static long draw() {
        return ThreadLocalRandom.current().nextLong(2, 1L << 62);
    }

    /**
     * An attempt is sent at {@code sentNanos} with {@code next} (0: it does not queue); returns
     * the ticket it replaces, whose grant this attempt claims, so that one is spent.
     */
    synchronized long replace(long next, long sentNanos) {
        heard = false;
        inFlight = true;
        long replaced = current;
        current = next;
        this.sentNanos = sentNanos;
        return replaced;
    }

    /** The attempt's reply is in. */
    synchronized void replyIn() {
        inFlight = false;
    }

    /**
     * A grant published {@code granted}: true when it is the current ticket and no attempt is in
     * flight, so the parked waiter claims now; one in flight claims when its reply is in. A
     * ticket an attempt since has replaced is stale: that attempt claimed the grant, or it had lapsed.
     */
    synchronized boolean hear(long granted) {
        if (granted != current) {
            return false;
        }
        heard = true;
        return !inFlight;
    }

    /** Whether a grant to the current ticket was heard since its attempt began. */
    boolean heard() {
        return heard;
    }

    /** Whether the current ticket was queued at most {@code windowNanos} before {@code nowNanos}. */
    synchronized boolean queuedWithin(long nowNanos, long windowNanos) {
        return current != 0 && nowNanos - sentNanos <= windowNanos;
    }

    /** The current ticket, 0 if none. */
    synchronized long current() {
        return current;
    }
}
