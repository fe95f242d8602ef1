package io.relock.internal.engine;

import io.relock.internal.backend.Budget;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.Renewal;
import io.relock.internal.lease.Hold;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a lock type brings to the {@link LockEngine}: its data layout on Redis, as the scripts
 * that acquire, release, undo and inspect a hold, and how to read their replies. Everything else
 * (waiting, deadlines, interrupts, lost replies, replica sync, the watchdog, observers) is the
 * engine's, the same for every type. A driver holds no per-call state.
 */
public interface LockDriver {

    /** The outcome of one acquire attempt. */
    record Attempt(boolean acquired, long ttlMillis, long token) {

        static final Attempt NOT_ACQUIRED = new Attempt(false, -2, 0);

        /** Acquired; {@code token} is the fencing token where the lock type has one, else 0. */
        public static Attempt acquired(long token) {
            return new Attempt(true, 0, token);
        }

        /** Held by another owner whose hold has {@code ttlMillis} left (-1: no expiry). */
        public static Attempt busy(long ttlMillis) {
            return new Attempt(false, ttlMillis, 0);
        }

        /** Maps the usual script reply: nil when acquired, else the holder's TTL. */
        public static Attempt fromTtl(Long ttl) {
            return ttl == null ? acquired(0) : busy(ttl);
        }
    }

    /**
     * One acquire or release call of {@code field}: the lease to set, the owner's hold count
     * before the call (so that a script run twice can tell the second run from a new call), how
     * long to retry through connection trouble, whether the call may repeat one that took
     * effect already, and for an acquire the waiter's tickets (see {@link Turn}): {@code ticket}
     * to queue with if the lock is busy (0: the attempt does not queue), {@code queuedTicket} the
     * one it queued with before (0: none), which leaves the queue and whose grant the call claims.
     * Types whose waiters take no turns ignore both. {@code sole} when the caller is blocked in the
     * synchronous API, its thread waiting for this call (a back end whose calls block may run it
     * on that thread); for an acquire that also means that no other acquire of this owner can
     * be under way (a thread blocked in the synchronous API): a hold of the owner that Redis has
     * while {@code holdsBefore} is 0 is then one its client forgot (a release a failover lost),
     * and the acquire takes it as a new hold instead of counting a re-entry on top of it.
     */
    record Request(String field, long leaseMillis, int holdsBefore, Budget budget, boolean repeat,
            long ticket, long queuedTicket, boolean sole) {

        Request(String field, long leaseMillis, int holdsBefore, Budget budget, boolean repeat) {
            this(field, leaseMillis, holdsBefore, budget, repeat, 0, 0, false);
        }

        public String lease() {
            return Long.toString(leaseMillis);
        }

        public String countBefore() {
            return Integer.toString(holdsBefore);
        }

        /** {@code '1'} when a hold this owner's client forgot may be taken over (see {@code sole}), else {@code '0'}. */
        public String takeOver() {
            return mayTakeOver() ? "1" : "0";
        }

        /**
         * The opposite of {@link #takeOver()}, {@code '0'} when a forgotten hold may be taken over: for
         * a script whose trailing {@code '0'}s may be left out, so that a first {@code lock()} sends none.
         */
        public String countsForgottenHold() {
            return mayTakeOver() ? "0" : "1";
        }

        private boolean mayTakeOver() {
            return sole && holdsBefore == 0;
        }
    }

    /** The type's name for people: {@code reentrant}, {@code fair}, {@code fenced}, {@code simple}, {@code read}, {@code write}. */
    String type();

    /** One acquire attempt; a repeat must not take a second hold. */
    CompletableFuture<Attempt> acquire(Request request);

    /**
     * Releases one hold: null if {@code field} holds nothing, 0 if still held, 1 if released; a
     * repeat of a release that took effect answers as that one did.
     */
    CompletableFuture<Long> release(Request request);

    /** Undoes an acquire that may or may not have been applied; {@code countBefore} is the prior hold count. */
    CompletableFuture<Long> rollback(String field, int countBefore);

    /** Hold count of {@code field}, 0 when it holds nothing. */
    CompletableFuture<Integer> holdCount(String field);

    /** Removes the lock whoever holds it and wakes its waiters: 1 if there was a lock, else 0. */
    CompletableFuture<Long> forceRelease();

    /** Whether anyone holds the lock in the sense of this type (for a read-write half: in its mode). */
    CompletableFuture<Boolean> isLocked();

    /** How the back end renews this type's holds in batches (on Redis: {@code lock_renew.lua}). */
    Renewal renewal();

    /** Whether a release may keep this type's last hold for a while instead ({@link #keep}). */
    default boolean keepsMinimumHold() {
        return false;
    }

    /**
     * Keeps {@code field}'s last hold for {@code keepMillis} more instead of releasing it (a
     * release with a minimum hold), announcing it so that parked waiters park until the new
     * expiry. Completes with 1 kept, 0 no longer held, 2 force-unlocked lately.
     */
    default CompletableFuture<Long> keep(String field, long keepMillis) {
        throw new UnsupportedOperationException("a " + type() + " lock cannot be released with a minimum hold");
    }

    /** What messages call a lock of this type: "lock", or "read lock" for one half of a read-write lock. */
    default String noun() {
        return "lock";
    }

    /** The hash field (or token) of a client's owner field {@code <clientId>:<owner>} in this type's data. */
    default String fieldOf(String ownerField) {
        return ownerField;
    }

    /** Where the release that lets {@code field} in is announced: the lock's channel unless the type says otherwise. */
    default String channelFor(LockKeys keys, String field) {
        return keys.channel();
    }

    /**
     * Whether this type's waiters take turns (see {@link Turn}): subscribed attempts queue a
     * ticket, a release grants the lock to the first live ticket of another client, or hands it
     * over to a waiting owner of the same client ({@link #handOver}).
     */
    default boolean takesTurns() {
        return false;
    }

    /**
     * Called when an owner stops waiting without the lock, e.g. to leave a waiter queue;
     * {@code ticket} is the ticket its last attempt queued with, 0 if it did not queue; a grant
     * to it is passed on.
     */
    default CompletableFuture<?> abandon(String field, long ticket) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * A hand-over: the last hold of {@code from} goes to {@code to}, an owner of the same client that waits
     * for the lock, without the lock being free in between: {@code to} gets one hold with
     * {@code leaseMillis}, and its queue entry (of {@code toTicket}, 0 if none) goes. Completes
     * with what Redis had around the lock then (see {@link HandedOver}), counting the clients
     * other than Relock's that listen for the lock only with {@code countOthers}. Only for types
     * whose {@link #takesTurns()} is true.
     */
    default CompletableFuture<HandedOver> handOver(String from, String to, long leaseMillis, long toTicket,
            boolean countOthers, Budget budget) {
        throw new UnsupportedOperationException(type() + " locks are not handed over between owners");
    }

    /**
     * What a hand-over found: {@code queued} waiters queued on Redis (-1 when {@code from} did not
     * hold exactly one hold, and nothing changed), and {@code othersListening} clients other than
     * Relock's listening for the lock (Redisson's waiters, which never queue; 0 when not counted).
     */
    record HandedOver(long queued, long othersListening) {

        /** Reads lock_hand_over.lua's reply: the two counts. */
        public static HandedOver of(List<Object> reply) {
            return new HandedOver((Long) reply.get(0), (Long) reply.get(1));
        }

        boolean happened() {
            return queued >= 0;
        }
    }
}
