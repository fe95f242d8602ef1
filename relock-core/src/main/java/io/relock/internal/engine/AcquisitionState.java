package io.relock.internal.engine;

import io.relock.AcquireEvent;
import io.relock.RelockException;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.Grants;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Observers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link Acquisition} is and how it ends: its state, the claim of a grant to its ticket,
 * the hand-over a {@link Turn} gives it, and the one end. {@link Acquisition} runs the attempts
 * and the waits between them; this part owns every way out of them.
 *
 * <p>A state machine: {@link #state} changes by compare-and-set. The live states move as the
 * table says; the end is decided once, by the compare-and-set that leaves the live states for an
 * ending one (HELD, HANDED_OVER, CLAIMED or LEAVING), and whoever wins it runs {@link #conclude},
 * the one way to end. A live move after the end is decided changes nothing.
 *
 * <pre>
 * state        event                                               next
 * STARTED      a re-entry                                          COUNTING
 * STARTED      another owner of this client holds or queues        SUBSCRIBING (behind it)
 * STARTED      otherwise; COUNTING: the count is read              ATTEMPTING (CLAIMING if a grant was heard)
 * ATTEMPTING   acquired                                            CONFIRMING, or UNDOING if cancelled
 * ATTEMPTING   busy, time left                                     the policy: SUBSCRIBING, PARKED or PAUSED
 * ATTEMPTING   busy, no time left, or cancelled                    LEAVING
 * ATTEMPTING   outcome unknown                                     UNDOING
 * CLAIMING     as ATTEMPTING (the attempt names the granted ticket)
 * CONFIRMING   confirmed                                           HELD
 * CONFIRMING   reconnected, time left                              ATTEMPTING (a repeat)
 * CONFIRMING   too few replicas, or failed                         UNDOING
 * UNDOING      undone                                              LEAVING
 * SUBSCRIBING  subscribed                                          ATTEMPTING, or PARKED (behind this client)
 * SUBSCRIBING  failed                                              PAUSED
 * PARKED       a message, the timeout, a cancel                    ATTEMPTING
 * PAUSED       the timer, a cancel                                 ATTEMPTING
 * PARKED       a grant to its ticket, queued recently              CLAIMED (the claim sent, not awaited)
 * PARKED       a grant to its ticket, queued long ago              CLAIMING (the claim awaited)
 * PARKED       a hand-over from another owner of this client       HANDED_OVER
 * any live     the client closes (abort)                           LEAVING
 * HELD, HANDED_OVER, CLAIMED                                       DONE (acquired)
 * LEAVING      the ticket left the queue                           DONE (not acquired, or failed)
 * </pre>
 *
 * <p>The claim. Once subscribed, each attempt queues a new ticket (one waiter per client and lock,
 * see {@link Turn#mayQueue}). A grant to it lasts {@link #GRANT_LEASE_MILLIS}. The attempt that
 * queued the ticket ran before the grant, so the grant lease ends no sooner than that long after
 * the attempt was sent, by any clock that runs at the server's rate. When less than
 * {@link #FAST_CLAIM_WINDOW_MILLIS} has passed since, the claim is sent and {@code lock()} returns
 * without waiting for it (CLAIMED): it reaches Redis with at least the rest of the window to
 * spare, and later writes about the hold wait for it ({@link Hold#pending}); if it fails anyway,
 * the hold is reported lost. Otherwise {@code lock()} returns only once the claim took the hold
 * (CLAIMING), and a waiter whose grant lease ran out finds the lock gone and waits again: a pause
 * never makes two holders. A grant that comes after the acquire ended is passed on by the
 * driver's {@link LockDriver#abandon leave}.
 */
abstract sealed class AcquisitionState permits Acquisition {

    /** Where an acquire is (see the table); the ending states are those {@link #ended()} names. */
    enum State {
        STARTED, COUNTING, ATTEMPTING, CLAIMING, SUBSCRIBING, PARKED, PAUSED, CONFIRMING, UNDOING,
        HELD, HANDED_OVER, CLAIMED, LEAVING, DONE;

        boolean ended() {
            return compareTo(HELD) >= 0;
        }
    }

    static final Logger LOG = LoggerFactory.getLogger(Acquisition.class);

    /** How long a grant lasts until its waiter claims it: what a dead next waiter costs. */
    static final long GRANT_LEASE_MILLIS = Grants.LEASE_MILLIS;
    /** A grant is claimed without waiting for the claim when its ticket was queued less than this long ago. */
    static final long FAST_CLAIM_WINDOW_MILLIS = GRANT_LEASE_MILLIS / 2;
    /** Past the grant lease when a waiter of another client was granted the lock, for clock drift. */
    private static final long GRANT_MARGIN_MILLIS = 50;

    final AcquirableLock lock;
    final LockClient runtime;
    final LockDriver driver;
    final LockKeys keys;

    final long owner;
    final CompletableFuture<Attempt> result = new CompletableFuture<>();
    /** Whether the caller blocks on {@link #result} (the synchronous API): completing it only wakes that thread. */
    final boolean callerBlocks;
    final long leaseMillis;
    final long waitNanos;
    final long startNanos;
    final String field;
    final boolean reentry;
    final String ownerThreadName;
    /** The observers at the start and their contexts, or null when nobody observed. */
    final Observers.Started observed;
    final AtomicReference<State> state = new AtomicReference<>(State.STARTED);
    final AtomicReference<Turn> subscription = new AtomicReference<>();
    final Ticket ticket = new Ticket();
    volatile boolean cancelled;
    volatile RuntimeException abortCause;
    volatile Waiter parked;
    volatile int holdsAfter;
    /** The owner's hold count before this acquire, as the last attempt sent it. */
    volatile int before;

    AcquisitionState(AcquirableLock lock, long owner, long waitNanos, long leaseMillis, boolean callerBlocks) {
        this.callerBlocks = callerBlocks;
        this.lock = lock;
        this.runtime = lock.client();
        this.driver = lock.driver();
        this.keys = lock.keys();
        this.owner = owner;
        this.waitNanos = waitNanos;
        this.leaseMillis = leaseMillis;
        this.startNanos = runtime.nanoTime();
        this.field = lock.fieldOf(owner);
        Thread caller = Thread.currentThread();
        this.ownerThreadName = caller.getId() == owner ? caller.getName() : null;
        Observers observers = runtime.observers();
        this.observed = observers.any() ? observers.acquireStarted(lock.getName(), driver.type(), owner) : null;
        // A lost hold may still be on Redis (the renewal failed, the key did not expire yet):
        // its count is read too, else a repeat would be judged against the wrong count.
        this.reentry = runtime.watchdog().get(lock, owner) != null;
    }

    // ---- transitions ------------------------------------------------------------------------

    /** Moves to the live state {@code next}, unless the end is decided already. */
    void enter(State next) {
        State now;
        do {
            now = state.get();
            if (now.ended()) {
                return;
            }
        } while (!state.compareAndSet(now, next));
    }

    /** Decides the end as {@code how} (an ending state): true for the one caller that did, which then concludes. */
    boolean endAs(State how) {
        State now;
        do {
            now = state.get();
            if (now.ended()) {
                return false;
            }
        } while (!state.compareAndSet(now, how));
        return true;
    }

    boolean ended() {
        return state.get().ended();
    }

    /** Ends without the lock (a timeout, a cancel, a failure), unless the end is decided already. */
    void leave(Attempt outcome, RuntimeException error) {
        if (endAs(State.LEAVING)) {
            conclude(outcome, error);
        }
    }

    /**
     * How long one try may ride through connection trouble, a server's restart or a failover: to
     * the end of the wait (for an unbounded {@code lock()}, until Redis is back), at least the
     * command timeout, and not after a cancel (an interrupt) or the client's close. Its retries
     * are repeats, so a try whose reply was lost takes effect once.
     */
    Budget retryBudget() {
        long waitDeadline = waitNanos >= Args.FOREVER_NANOS ? startNanos + Args.FOREVER_NANOS : startNanos + waitNanos;
        return runtime.budget(waitDeadline).stoppedBy(() -> cancelled);
    }

    /** Records the hold, whose lease started no earlier than {@code sentNanos}; see {@link Hold#pending}. */
    Hold held(int count, long sentNanos, CompletableFuture<Void> pending) {
        holdsAfter = count;
        return runtime.watchdog().acquired(lock, owner, field, leaseMillis, count, ownerThreadName, sentNanos, pending);
    }

    // ---- grants and claims (see Turn) -------------------------------------------------------

    /** A grant published {@code granted}, a ticket of this waiter: the parked waiter claims it now. */
    void onGrant(long granted) {
        if (ticket.hear(granted)) {
            Waiter waiter = parked;
            if (waiter != null) {
                claim(waiter);
            }
        }
    }

    /**
     * Claims the grant to the parked {@code waiter}: without waiting for the claim when its ticket
     * is fresh enough (CLAIMED, see the class comment), else by an attempt that {@code lock()}
     * waits for (CLAIMING). With replica sync the claim must be confirmed by replicas before the
     * caller holds; a cancelled waiter's attempt ends it, and its leave passes the grant on.
     */
    void claim(Waiter waiter) {
        boolean fresh = ticket.queuedWithin(runtime.nanoTime(), TimeUnit.MILLISECONDS.toNanos(FAST_CLAIM_WINDOW_MILLIS));
        if (fresh && !cancelled && runtime.gateway().replicaSyncMinReplicas() == 0 && waiter.take()) {
            claimWithoutWaiting();
        } else {
            waiter.fire();
        }
    }

    /**
     * Sends the claim, records the hold with the claim as its pending write, and ends as acquired
     * without waiting for the reply. A claim that finds the grant gone makes the hold lost; one
     * whose outcome stays unknown is undone too.
     */
    private void claimWithoutWaiting() {
        if (cancelled) {
            // Interrupted meanwhile: not acquired, and the leave passes the grant on.
            leave(Attempt.NOT_ACQUIRED, null);
            return;
        }
        if (!endAs(State.CLAIMED)) {
            // Ended otherwise (the client closing): its leave passes the grant on.
            return;
        }
        long claimed = ticket.current();
        int countBefore = before;
        long sentNanos = runtime.nanoTime();
        // What the owner's next calls wait for: the claim, and the loss and undo it may bring.
        CompletableFuture<Void> settled = new CompletableFuture<>();
        Hold hold = held(countBefore + 1, sentNanos, settled);
        // The caller is told first and the claim sent after: its later calls about the hold wait
        // for the claim's reply anyway, and on a busy machine its thread starts sooner this way.
        conclude(Attempt.acquired(0), null);
        CompletableFuture<Attempt> claim;
        try {
            claim = driver.acquire(new Request(field, runtime.watchdog().leaseFor(leaseMillis), countBefore,
                    retryBudget(), false, 0, claimed, false));
        } catch (RuntimeException e) {
            claim = CompletableFuture.failedFuture(e);
        }
        claim.whenComplete((attempt, error) -> {
            boolean undoing = false;
            try {
                if (error == null && attempt.acquired()) {
                    return;
                }
                RuntimeException cause = error != null
                        ? Exceptions.translate(lock.describe("claim the grant of"), error)
                        : new RelockException("the grant of lock '" + lock.getName() + "' to " + field
                                + " had lapsed when its claim reached Redis");
                runtime.watchdog().lost(hold, cause);
                if (error != null && Exceptions.outcomeUnknown(error)) {
                    undoing = true;
                    lock.rollback(owner, countBefore, cause).whenComplete((undone, e) -> settled.complete(null));
                }
            } finally {
                if (!undoing) {
                    settled.complete(null);
                }
            }
        });
    }

    /**
     * A grant went to a waiter of another client: if that waiter is dead, the lock is free when
     * the grant lease runs out, and nobody announces it, so this client's queued waiter looks by
     * then rather than at the holder's TTL it was told.
     */
    void grantedElsewhere() {
        Waiter waiter = parked;
        if (waiter != null) {
            waiter.fireWithin(runtime.timer(), GRANT_LEASE_MILLIS + GRANT_MARGIN_MILLIS);
        }
    }

    /** Parked on its turn after a busy attempt: a cancel, or a grant heard meanwhile, acts now. */
    void parkedAfterBusy(Waiter waiter) {
        if (cancelled) {
            waiter.fire();
        } else if (ticket.heard()) {
            // A grant heard while the attempt was in flight (it ran before the grant), or since.
            claim(waiter);
        }
    }

    /**
     * Called where this waiter ends without an attempt that answered "busy" after its last
     * wake-up: that wake-up may have been a release meant for some waiter of this client, and
     * must not end here (the others would sleep until the holder's TTL).
     */
    void passOnWakeUp() {
        Turn turn = subscription.get();
        if (turn != null) {
            turn.passOn();
        }
    }

    /** The one end, run by whoever decided it ({@link #endAs}): leaves the queue if not acquired, then tells the caller. */
    void conclude(Attempt outcome, RuntimeException error) {
        // A close's cause replaces "not acquired" only: an acquire that won is reported as held.
        boolean acquired = outcome != null && outcome.acquired();
        RuntimeException failure = error != null || acquired ? error : abortCause;
        runtime.unregister(self());
        if (acquired) {
            // Told first: the caller's thread then starts while the unsubscribe is written.
            deliver(outcome, failure);
            releaseSubscription(true);
            return;
        }
        driver.abandon(field, ticket.current()).whenComplete((ignored, abandonError) -> {
            if (abandonError != null) {
                // A fair lock's queue then keeps this waiter until threadWaitTime drops it.
                LOG.debug("could not leave the waiters of lock '{}' ({})", lock.getName(),
                        Exceptions.unwrap(abandonError).toString());
            }
            // Given back only now: the next waiter of this client queues once this ticket is gone.
            releaseSubscription(false);
            deliver(outcome, failure);
        });
    }

    private void deliver(Attempt outcome, RuntimeException failure) {
        state.set(State.DONE);
        if (observed != null) {
            observe(outcome, failure);
        }
        if (failure != null) {
            result.completeExceptionally(failure);
        } else {
            result.complete(outcome);
        }
    }

    private void observe(Attempt outcome, RuntimeException failure) {
        AcquireEvent.Outcome how;
        if (failure != null) {
            how = AcquireEvent.Outcome.ERROR;
        } else if (outcome.acquired()) {
            how = AcquireEvent.Outcome.ACQUIRED;
        } else if (cancelled) {
            how = AcquireEvent.Outcome.INTERRUPTED;
        } else {
            how = AcquireEvent.Outcome.TIMEOUT;
        }
        Observers.acquireEnded(new AcquireEvent(lock.getName(), driver.type(), owner, how,
                runtime.nanoTime() - startNanos, how == AcquireEvent.Outcome.ACQUIRED ? holdsAfter : 0, failure),
                observed);
    }

    /** Gives the subscription back; {@code held} when this acquire ended holding the lock. */
    void releaseSubscription(boolean held) {
        Turn turn = subscription.getAndSet(null);
        if (turn != null) {
            long last = ticket.current();
            if (last != 0) {
                turn.forgetGrant(last);
            }
            turn.leaveQueue(self(), held);
            if (held && driver.takesTurns()) {
                // Lingers while this client holds the lock and a moment after: its next acquire of
                // the lock then queues in its first attempt (see Acquisition#joinStandingSubscription).
                String key = keys.key();
                runtime.channels().release(turn, () -> runtime.watchdog().holds(key));
            } else {
                runtime.channels().release(turn);
            }
        }
    }

    private Acquisition self() {
        return (Acquisition) this;
    }

    State state() {
        return state.get();
    }

    @Override
    public String toString() {
        return "Acquisition{lock='" + lock.getName() + "', owner=" + owner + ", state=" + state.get()
                + (cancelled ? ", cancelled" : "") + "}";
    }
}
