package io.relock.internal.engine;

import io.relock.ReleaseEvent;
import io.relock.RelockException;
import io.relock.internal.backend.Budget;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Exceptions;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This client's turn on one lock: the one place that decides who of this client's waiters gets
 * the lock next, and how. One per subscribed unlock channel (so one per lock, for the types whose
 * waiters take turns, see {@link LockDriver#takesTurns()}), made and reference-counted by
 * {@link UnlockChannels}. The releasing path ({@link LockEngine#release}) and the waiting path
 * ({@link Acquisition}) both talk to it, never to each other.
 *
 * <p>The words, used everywhere else in the engine, its scripts, ARCHITECTURE.md and docs/how-it-works.md:
 * <ul>
 *   <li><b>hand-off</b>: the lock going from its holder straight to a waiter, never free in
 *       between: a hand-over within the client, or a grant and its claim across clients.
 *   <li><b>ticket</b>: a waiter's place in the lock's queue on Redis ({@code {name}:handoff}), a
 *       random number of 2 or more that a subscribed attempt queues with (0 and 1 are unlock
 *       messages). Each attempt queues with a new ticket, replacing the one before, so a ticket
 *       names the attempt that queued it. One waiter per client and lock holds a ticket
 *       ({@link #mayQueue}); the others wait here behind it.
 *   <li><b>hand-over</b>: within one client, the holder's last {@code unlock()} gives its hold to
 *       the parked waiter of this client that asked first, in one script
 *       ({@link LockDriver#handOver}, {@code lock_hand_over.lua}): the lock is never free on Redis in
 *       between, and the waiter returns from {@code lock()} at once ({@link #handOver}).
 *   <li><b>grant</b>: across clients, the release that ends the last hold makes the owner of the
 *       first live ticket the owner for a short grant lease ({@link Acquisition#GRANT_LEASE_MILLIS})
 *       and publishes the ticket on the unlock channel ({@code grant.lua}); the message wakes
 *       that waiter alone ({@link #onTicket}). {@code relock:granted} on the lock names the ticket.
 *   <li><b>claim</b>: the granted waiter taking the hold with its own lease, by an attempt that
 *       names the granted ticket: a state of its acquisition, sent without waiting while the
 *       ticket is fresh, else awaited (see {@link Acquisition}).
 *   <li><b>yield</b>: a release while clients other than Relock's listen (Redisson's waiters,
 *       which hold no tickets): it frees the lock (DEL, PUBLISH 0) instead of granting it, and
 *       {@code {name}:yield} keeps Relock's attempts off it for a moment, so the others get it too.
 *   <li><b>mark</b>: the {@code relock:<channel>} subscription every Relock client makes in the
 *       same command as the unlock channel's; the difference of the two subscriber counts is how
 *       many other clients listen ({@code PubSubChannels.markOf}, in the redis package).
 *   <li><b>take-over</b>: an acquire by a thread blocked in the synchronous API
 *       ({@link LockDriver.Request#sole}) over a hold its client forgot (a release a failover
 *       lost) takes it as a new hold rather than counting a re-entry on top of it.
 * </ul>
 *
 * <p>Hand-overs within this client are bounded: after {@link #MAX_HAND_OVERS_IN_A_ROW} in a row
 * while other clients' tickets (or other clients listening) wait, the lock goes through Redis.
 */
public final class Turn {

    /**
     * A last release hands its hold over to a waiter of this client without waiting for Redis
     * only while at least this much of its lease is surely left: the hand-over then reaches Redis
     * before the lock could expire under the waiter.
     */
    static final long HAND_OVER_LEASE_MARGIN_MILLIS = 1000;

    /**
     * At most this many hand-overs between owners of one client in a row while waiters of other
     * clients are queued; then the lock goes through Redis to the next of them.
     */
    public static final int MAX_HAND_OVERS_IN_A_ROW = 16;

    /**
     * The run while clients other than Relock's listen for the lock (Redisson's waiters, during a
     * migration): they take at most a turn or two per release through Redis (a yield), so with
     * runs of 16 one busy Relock client left each of their threads about a quarter of an equal
     * share (MixedFleetTest). The check at the end of each run tells whether they still listen.
     */
    public static final int MAX_HAND_OVERS_WHILE_OTHERS_LISTEN = 8;

    final String name;
    private final Parking parking;
    /** What to run when a grant names a ticket of this client's waiter, by ticket. */
    private final Map<String, Runnable> grants = new ConcurrentHashMap<>();
    /** The one waiter of this client whose ticket may be queued on Redis; guarded by this. */
    private Acquisition queuedWaiter;
    /** Hand-overs between owners of this client in a row, since the lock last went through Redis; guarded by this. */
    private int localStreak;
    /** Whether the last hand-over saw tickets of other clients queued; guarded by this. */
    private boolean othersQueued;
    /** Whether the last check at the end of a run found clients other than Relock's listening; guarded by this. */
    private boolean othersListening;
    /** Waiters of this client subscribed; guarded by {@link UnlockChannels}' map. */
    int references;
    /** How many times the subscription began to linger (see {@link UnlockChannels#release(Turn, java.util.function.BooleanSupplier)}); guarded by its map. */
    long lingerRounds;
    CompletableFuture<Void> ready;

    Turn(String name, Parking parking) {
        this.name = name;
        this.parking = parking;
    }

    // ---- the waiting path ------------------------------------------------------------------

    /** How many messages came on this channel so far; read before an attempt, passed to {@link #park}. */
    public long messages() {
        return parking.messages();
    }

    /**
     * Runs {@code wakeUp} once: at once if a message came since the count {@code seen} that
     * this waiter may take, else at the next unlock message that picks it or after
     * {@code timeoutMillis}, whichever is first (see {@link Parking#park}).
     */
    public Waiter park(Runnable wakeUp, long timeoutMillis, long seen) {
        return parking.park(wakeUp, timeoutMillis, seen);
    }

    /** {@link #park(Runnable, long, long)} for {@code acquisition}, which a hand-over may take instead. */
    Waiter park(Acquisition acquisition, Runnable wakeUp, long timeoutMillis, long seen) {
        return parking.park(acquisition, wakeUp, timeoutMillis, seen);
    }

    /**
     * Runs {@code onGrant} (on the pub/sub thread) when a grant publishes {@code ticket} here,
     * until {@link #forgetGrant}. A ticket message is not an unlock message: it wakes no parked waiter.
     */
    public void expectGrant(long ticket, Runnable onGrant) {
        grants.put(Long.toString(ticket), onGrant);
    }

    /** Stops expecting {@code ticket}: its waiter ended (a late ticket is then another client's to it). */
    public void forgetGrant(long ticket) {
        grants.remove(Long.toString(ticket));
    }

    /**
     * Whether {@code waiter} may queue a ticket on Redis: one waiter of this client per lock
     * does, the others wait here until it has no ticket any more (see {@link #leaveQueue}).
     */
    synchronized boolean mayQueue(Acquisition waiter) {
        if (queuedWaiter == null) {
            queuedWaiter = waiter;
        }
        return queuedWaiter == waiter;
    }

    /**
     * {@code waiter} has no ticket on Redis any more: it left the queue, or it holds the lock
     * ({@code holds}). If it left and was the queued one, the longest parked waiter of this
     * client retries at once and queues in its place, or nothing would queue for them. If it
     * holds, this client needs no ticket while it does: its other waiters are handed the lock
     * over here, and when the lock goes through Redis again, the release sends one of them to
     * queue behind the clients that waited meanwhile ({@link #releasedThroughRedis()}).
     */
    void leaveQueue(Acquisition waiter, boolean holds) {
        boolean passOn;
        synchronized (this) {
            boolean wasQueued = queuedWaiter == waiter;
            if (wasQueued) {
                queuedWaiter = null;
            }
            passOn = wasQueued && !holds;
        }
        if (passOn) {
            parking.signal(false);
        }
    }

    /** Whether this client has a waiter that may hold a ticket for this lock. */
    synchronized boolean hasQueuedWaiter() {
        return queuedWaiter != null;
    }

    /**
     * Hands a wake-up on to another waiter of this client, from one that may have taken an
     * unlock message and ends without trying for it (interrupted, failed, closed).
     */
    void passOn() {
        parking.signal(false);
    }

    // ---- messages ---------------------------------------------------------------------------

    /** An unlock message (a read-unlock, or a reconnect, when {@code all}): wakes parked waiters. */
    void signal(boolean all) {
        parking.signal(all);
    }

    /**
     * A grant published {@code ticket}: this client's waiter with that ticket claims the lock;
     * a ticket of another client's waiter (or of one of this client's that has ended, whose leave
     * passes the grant on) means the lock may be free within the grant lease, if that waiter is
     * dead, so this client's queued waiter wakes by then at the latest.
     */
    void onTicket(String ticket) {
        Runnable grant = grants.get(ticket);
        if (grant != null) {
            grant.run();
            return;
        }
        Acquisition queued;
        synchronized (this) {
            queued = queuedWaiter;
        }
        if (queued != null) {
            queued.grantedElsewhere();
        }
    }

    // ---- the releasing path -----------------------------------------------------------------

    /**
     * The last hold of {@code hold}, one of this client's, ends: hands it over to the parked
     * waiter of this client that asked first, in one script call ({@link LockDriver#handOver}), and
     * completes as the release does; or null when there is none to hand it to, and the release
     * goes through Redis. None when the type takes no turns, when replicas must confirm every
     * acquire ({@code replicaSync}: the waiter's would not be), when the lease left is too short
     * for the hand-over to surely arrive in time ({@link #HAND_OVER_LEASE_MARGIN_MILLIS}), or when
     * {@link #MAX_HAND_OVERS_IN_A_ROW} came in a row while other clients waited.
     *
     * <p>The waiter's {@code lock()} returns as the call is sent, since this client already holds
     * the lock and nothing is left to wait for. A hand-over that finds {@code hold} gone makes the
     * waiter's hold lost too; one whose outcome stays unknown fails this release and undoes the
     * waiter's hold if it took effect.
     */
    CompletableFuture<Void> handOver(AcquirableLock lock, Hold hold, boolean replicaSync, Budget budget) {
        LockClient client = lock.client();
        if (!lock.driver().takesTurns() || replicaSync
                || hold.leaseLeftMillis(client.nanoTime()) < HAND_OVER_LEASE_MARGIN_MILLIS) {
            return null;
        }
        Acquisition waiter = nextForHandOver(lock.keys().key());
        if (waiter == null) {
            return null;
        }
        hold.releasing.incrementAndGet();
        long sentNanos = client.nanoTime();
        CompletableFuture<LockDriver.HandedOver> handedOver;
        boolean countOthers = endsStreak();
        try {
            handedOver = lock.driver().handOver(hold.field, waiter.field(), waiter.leaseOnRedis(), waiter.queuedTicket(),
                    countOthers, budget);
        } catch (RuntimeException e) {
            handedOver = CompletableFuture.failedFuture(e);
        }
        // What the waiter's next calls wait for: the hand-over, and the loss and undo it may bring.
        CompletableFuture<Void> settled = new CompletableFuture<>();
        Hold received = waiter.handedOver(sentNanos, settled);
        return handedOver.handle((found, error) -> {
            boolean undoing = false;
            try {
                if (error == null && found.happened()) {
                    handedOver(waiter, found, countOthers);
                    client.watchdog().forget(hold);
                    client.released(hold, ReleaseEvent.Outcome.RELEASED);
                    return null;
                }
                if (error == null) {
                    client.watchdog().lost(received, new RelockException("lock '" + lock.getName()
                            + "' was handed over by " + hold.field + ", which no longer held it"));
                    client.watchdog().forget(hold);
                    client.released(hold, ReleaseEvent.Outcome.LOST);
                    throw Exceptions.holdLost(lock.getName(), hold.field, hold.leaseMillis, hold.watchdog,
                            hold.lossCause);
                }
                RuntimeException failure = Exceptions.translate(lock.describe("unlock"), error);
                client.watchdog().lost(received, failure);
                if (Exceptions.outcomeUnknown(error)) {
                    undoing = true;
                    lock.rollback(waiter.owner, 0, failure).whenComplete((undone, undoError) -> settled.complete(null));
                }
                throw failure;
            } finally {
                hold.releasing.decrementAndGet();
                if (!undoing) {
                    settled.complete(null);
                }
            }
        });
    }

    /**
     * Takes the parked waiter that asked first among those that may be handed the lock over (see
     * {@link Parking#take}), so that it wakes no more and its acquisition is this hand-over's to
     * end: first come, first served, whether or not it holds this client's ticket (that place
     * then passes to the next waiter, see {@link #leaveQueue}); passing it over would starve it.
     */
    private Acquisition nextForHandOver(String key) {
        synchronized (this) {
            if (othersQueued && localStreak >= runLength()) {
                return null;
            }
        }
        while (true) {
            Acquisition waiter = parking.take(candidate -> candidate.mayBeHandedOver(key));
            if (waiter == null || waiter.takeForHandOver()) {
                return waiter;
            }
            // It ended meanwhile (its client is closing); its own end cleans up.
        }
    }

    /**
     * Whether the next hand-over ends a run of {@link #MAX_HAND_OVERS_IN_A_ROW}: it then also asks
     * how many clients other than Relock's listen (Redisson's waiters, which never queue), so
     * that a run within this client ends for them too, not only for queued clients.
     */
    private synchronized boolean endsStreak() {
        return (localStreak + 1) % runLength() == 0;
    }

    /** How many hand-overs make a run now; guarded by this. */
    private int runLength() {
        return othersListening ? MAX_HAND_OVERS_WHILE_OTHERS_LISTEN : MAX_HAND_OVERS_IN_A_ROW;
    }

    /**
     * A hand-over to {@code waiter} went through, and {@code found} what Redis had: tickets
     * queued, this client's own among them if it has a queued waiter besides the one handed the
     * lock, and, {@code counted} at the end of a run, the other clients listening.
     */
    private synchronized void handedOver(Acquisition waiter, LockDriver.HandedOver found, boolean counted) {
        localStreak++;
        boolean ownTicket = queuedWaiter != null && queuedWaiter != waiter;
        othersQueued = found.queued() - (ownTicket ? 1 : 0) + found.othersListening() > 0;
        if (counted) {
            // Only the check at the end of a run counts them (PUBSUB NUMSUB).
            othersListening = found.othersListening() > 0;
        }
    }

    /**
     * A holder of this client released the lock through Redis (a grant to another client's
     * waiter, or free for anyone), or its hold was lost: the streak of hand-overs ends, and if no
     * waiter of this client holds a ticket, the longest parked one tries again and queues, or it
     * would wait for a message meant for nobody here.
     */
    void releasedThroughRedis() {
        boolean queued;
        synchronized (this) {
            localStreak = 0;
            queued = queuedWaiter != null;
        }
        if (!queued) {
            parking.signal(false);
        }
    }
}
