package io.relock.internal.engine;

import io.relock.RelockConnectionException;
import io.relock.RelockReplicaSyncException;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.WriteGateway;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Exceptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One acquire with its deadline, run as a chain of callbacks rather than a blocked thread: an
 * unlock message triggers the next attempt directly from the I/O thread, and the caller (sync
 * API) only waits for {@link #result}. The words (ticket, hand-over, grant, claim) are
 * {@link Turn}'s; how it waits between attempts is its {@link WaitPolicy}'s.
 *
 * <p>{@link #cancel()} (an interrupt) only sets a flag and fires a parked waiter early; the next
 * transition sees the flag. Whatever the path, {@link #result} completes once, with nothing held
 * that the caller will not hear of. An acquire that failed or gave up completes after its
 * subscription is given back; one that won gives it back just after, so that the caller's thread
 * is woken before the unsubscribe is written.
 */
public final class Acquisition extends AcquisitionState {

    private final WaitPolicy wait;
    private int failures;
    private volatile long subscribedEpoch;
    /** How many times this acquire parked; only the latest park sets {@link #parked}. */
    private final AtomicLong parks = new AtomicLong();

    /** An acquire whose caller takes the result as a stage (see {@link #callerBlocks}). */
    Acquisition(AcquirableLock lock, long owner, long waitNanos, long leaseMillis) {
        this(lock, owner, waitNanos, leaseMillis, false);
    }

    Acquisition(AcquirableLock lock, long owner, long waitNanos, long leaseMillis, boolean callerBlocks) {
        super(lock, owner, waitNanos, leaseMillis, callerBlocks);
        this.wait = lock.waitPolicy();
    }

    // ---- attempts ---------------------------------------------------------------------------

    void begin() {
        runtime.register(this);
        Hold held = reentry ? runtime.watchdog().get(lock, owner) : null;
        if (held != null && held.writePending()) {
            // The owner was told it held before Redis answered the hand-over or claim. Counted meanwhile,
            // a re-entry would make a retry of that write (its reply lost) misjudge the count and
            // add a hold nobody knows of; so it follows the write, as a release does.
            held.pending.thenRun(() -> {
                if (!ended()) {
                    start();
                }
            });
            return;
        }
        start();
    }

    private void start() {
        if (mayWaitBehindOwnClient() && busyHere()) {
            // Redis would only say "busy": wait for this client's holder to hand the lock over.
            WaitPolicy.BEHIND_OWN_CLIENT.awaitNextChance(this,
                    new WaitPolicy.Busy(0, 0, TimeUnit.NANOSECONDS.toMillis(waitNanos) + 1, 0));
        } else if (reentry) {
            enter(State.COUNTING);
            // Recognising a repeat, and undoing an acquire whose outcome stayed unknown, need the
            // exact count before it; a first acquire starts from 0 and needs no round trip for that.
            driver.holdCount(field).whenComplete((count, error) -> {
                if (error != null) {
                    leave(null, Exceptions.translate(lock.describe("acquire"), error));
                } else {
                    retry(count);
                }
            });
        } else {
            joinStandingSubscription();
            retry(0);
        }
    }

    /**
     * Joins this client's subscription to the lock's unlock channel when one stands (it lingers
     * after an acquire of this client won the lock, see {@link UnlockChannels#release(Turn,
     * java.util.function.BooleanSupplier)}): the first attempt then already queues a ticket, so a
     * contended acquire costs neither a SUBSCRIBE nor a second attempt.
     */
    private void joinStandingSubscription() {
        if (waitNanos <= 0 || !wait.subscribes() || !driver.takesTurns()) {
            return;
        }
        Turn turn = runtime.channels().joinStanding(driver.channelFor(keys, field));
        if (turn != null) {
            subscribedEpoch = runtime.gateway().connectionEpoch();
            subscription.set(turn);
        }
    }

    /** The next attempt, from an owner's hold count of {@code before}: a policy's wake-up runs it. */
    void retry(int before) {
        attempt(before, false);
    }

    /** One try; {@code repeat} when an earlier try's effect may stand (its outcome was never seen). */
    private void attempt(int before, boolean repeat) {
        if (cancelled) {
            passOnWakeUp();
            leave(Attempt.NOT_ACQUIRED, null);
            return;
        }
        this.before = before;
        Turn turn = subscription.get();
        // Only a waiter that hears its ticket queues (a first attempt is not subscribed yet, unless
        // it joined a standing subscription), and only one waiter of this client per lock.
        long newTicket = turn != null && driver.takesTurns() && turn.mayQueue(this) ? Ticket.draw() : 0;
        if (newTicket != 0) {
            turn.expectGrant(newTicket, () -> onGrant(newTicket));
        }
        long sentNanos = runtime.nanoTime();
        boolean claims = ticket.heard();
        long queuedTicket = ticket.replace(newTicket, sentNanos);
        enter(claims ? State.CLAIMING : State.ATTEMPTING);
        long lease = runtime.watchdog().leaseFor(leaseMillis);
        long epoch = runtime.gateway().connectionEpoch();
        // Read before the attempt: a release announced after it, before this waiter parks, is
        // then seen by the park, which retries at once instead of sleeping through it.
        long seen = turn != null ? turn.messages() : 0;
        CompletableFuture<Attempt> reply;
        try {
            reply = driver.acquire(new Request(field, lease, before, retryBudget(), repeat, newTicket, queuedTicket,
                    callerBlocks));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((attempt, error) -> {
            if (queuedTicket != 0 && turn != null) {
                // A grant to it came before this attempt ran, which then claimed it, or it lapsed.
                turn.forgetGrant(queuedTicket);
            }
            onReply(before, epoch, seen, sentNanos, attempt, error);
        });
    }

    private void onReply(int before, long epoch, long seen, long sentNanos, Attempt attempt, Throwable error) {
        ticket.replyIn();
        if (error != null) {
            passOnWakeUp();
            RuntimeException failure = Exceptions.translate(lock.describe("acquire"), error);
            if (Exceptions.outcomeUnknown(error)) {
                // The gateway gave up retrying: undone before the caller hears of it.
                enter(State.UNDOING);
                lock.rollback(owner, before, failure).whenComplete((ignored, e) -> leave(null, failure));
            } else {
                leave(null, failure);
            }
            return;
        }
        if (attempt.acquired()) {
            if (cancelled) {
                enter(State.UNDOING);
                lock.rollback(owner, before, null).whenComplete((ignored, e) -> leave(Attempt.NOT_ACQUIRED, null));
            } else {
                enter(State.CONFIRMING);
                confirm(before, epoch, sentNanos, attempt);
            }
            return;
        }
        long leftNanos = leftNanos();
        if (leftNanos <= 0 || cancelled) {
            leave(Attempt.NOT_ACQUIRED, null);
            return;
        }
        long leftMillis = TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1;
        long ttl = attempt.ttlMillis();
        // A TTL of 0 is a hold (or a yield) in its last millisecond, not one without expiry (-1):
        // parking for the whole wait would sleep through its end.
        long untilExpiry = ttl >= 0 ? Math.min(Math.max(ttl, 1), leftMillis) : leftMillis;
        failures++;
        wait.awaitNextChance(this, new WaitPolicy.Busy(before, seen, untilExpiry, failures));
    }

    /**
     * Keeps the acquire only once it is confirmed (with replica sync, once enough replicas have
     * it): a failover to a replica without it would hand the lock to someone else while this
     * owner believes it holds it.
     */
    private void confirm(int before, long epoch, long sentNanos, Attempt attempt) {
        WriteGateway gateway = runtime.gateway();
        gateway.confirmWrite(keys.key(), epoch).whenComplete((confirmation, error) -> {
            if (error == null && confirmation.confirmed()) {
                // Decided before the hold is recorded: a close that ended the wait meanwhile has
                // told the caller it failed, so the acquire is undone rather than left held.
                if (endAs(State.HELD)) {
                    held(before + 1, sentNanos, null);
                    conclude(attempt, null);
                } else {
                    lock.rollback(owner, before, null);
                }
                return;
            }
            if (error == null && confirmation.unsure() && !cancelled
                    && retryBudget().deadlineNanos() - runtime.nanoTime() > 0) {
                // Run again as a repeat (it only refreshes the lease: a write on the new
                // connection, or the whole acquire on a promoted replica that lacked it).
                attempt(before, true);
                return;
            }
            RuntimeException failure;
            if (error != null) {
                failure = Exceptions.translate(lock.describe("wait for replicas of"), error);
            } else if (confirmation.unsure()) {
                failure = new RelockConnectionException("Redis connection was re-established while waiting "
                        + "for replicas: " + lock.describe("acquire") + "; the acquire was undone", null);
            } else {
                int required = gateway.replicaSyncMinReplicas();
                failure = new RelockReplicaSyncException("acquired lock '" + lock.getName() + "' on the master but only "
                        + confirmation.acks() + " of the required " + required + " replicas acknowledged within "
                        + gateway.replicaSyncTimeoutMillis() + " ms; the acquire was released",
                        (int) confirmation.acks(), required);
            }
            // Undone before the caller hears of it, so nothing stays held that it does not know of.
            enter(State.UNDOING);
            lock.rollback(owner, before, failure).whenComplete((ignored, rollbackError) -> leave(null, failure));
        });
    }

    // ---- what the wait policies ask ---------------------------------------------------------

    LockClient client() {
        return runtime;
    }

    boolean cancelled() {
        return cancelled;
    }

    long leftNanos() {
        return waitNanos - (runtime.nanoTime() - startNanos);
    }

    /** The turn this waiter is subscribed to, or null. */
    Turn turn() {
        return subscription.get();
    }

    /** Whether a connection broke since the subscription was made, so a release may go unheard. */
    boolean subscriptionUnsure() {
        return runtime.gateway().connectionEpoch() != subscribedEpoch;
    }

    /** Ends without the lock: the wait is over, or cancelled. */
    void giveUp() {
        leave(Attempt.NOT_ACQUIRED, null);
    }

    /**
     * Enters {@code how} (PARKED or PAUSED) and waits as {@code park} does with the wake-up it is
     * given, which makes the next attempt from {@code before}; a cancel fires the waiter it returns.
     */
    Waiter waitOn(State how, int before, Function<Runnable, Waiter> park) {
        enter(how);
        long number = parks.incrementAndGet();
        Waiter waiter = park.apply(() -> retry(before));
        // A park that woke at once (a release it had not seen yet) ran the next attempt, which
        // may have parked again before this line, on this thread or on the one its reply came
        // on: that newer waiter is the one a cancel or a grant must wake, not this spent one.
        synchronized (parks) {
            if (parks.get() == number) {
                parked = waiter;
            }
        }
        return waiter;
    }

    /**
     * Subscribes to the unlock channel, then runs {@code then} with its turn. Where only the
     * pub/sub connection is in trouble (a proxy or an output buffer limit dropped it), waits by
     * polling until it is back, within the wait.
     */
    void subscribe(int before, long untilExpiry, Consumer<Turn> then) {
        enter(State.SUBSCRIBING);
        runtime.channels().subscribe(driver.channelFor(keys, field)).whenComplete((turn, error) -> {
            if (error != null) {
                LOG.debug("cannot subscribe to the unlock channel of lock '{}' ({}); polling", lock.getName(),
                        Exceptions.unwrap(error).toString());
                WaitPolicy.Backoff.pause(this, before, Math.min(untilExpiry, Budget.MAX_RETRY_PAUSE_MILLIS));
                return;
            }
            subscribedEpoch = runtime.gateway().connectionEpoch();
            subscription.set(turn);
            if (ended()) {
                releaseSubscription(false);
            } else {
                then.accept(turn);
            }
        });
    }

    /** Whether the engine would rather wait behind another owner of this client than ask Redis. */
    private boolean mayWaitBehindOwnClient() {
        return !reentry && waitNanos > 0 && wait.subscribes() && driver.takesTurns()
                && runtime.gateway().replicaSyncMinReplicas() == 0;
    }

    /** How long the hold of another owner of this client has left as it knows it, -1 if none. */
    long ownClientsHolderLeaseMillis() {
        return runtime.watchdog().heldByOthers(keys.key(), field);
    }

    /** Whether another owner of this client holds this lock, or a waiter of this client is queued for it. */
    boolean busyHere() {
        if (ownClientsHolderLeaseMillis() >= 0) {
            return true;
        }
        Turn turn = runtime.channels().existing(driver.channelFor(keys, field));
        return turn != null && turn.hasQueuedWaiter();
    }

    // ---- hand-overs (what the Turn asks) ----------------------------------------------------

    /** Whether a release of {@code key} by another owner of this client may hand its hold over to this waiter. */
    boolean mayBeHandedOver(String key) {
        return !reentry && driver.takesTurns() && keys.key().equals(key) && !cancelled && !ended()
                && runtime.nanoTime() - startNanos < waitNanos;
    }

    /** Decides the end as a hand-over (the Turn took the parked waiter): false if it ended otherwise. */
    boolean takeForHandOver() {
        return endAs(State.HANDED_OVER);
    }

    /**
     * The hand-over to this waiter was sent at {@code sentNanos}, and {@code settled} follows it
     * (see {@link Hold#pending}): the hold is recorded, and the acquire ends as acquired at once
     * (for an async caller, on the client's worker threads, not in the releasing owner's unlock()).
     */
    Hold handedOver(long sentNanos, CompletableFuture<Void> settled) {
        Hold hold = held(1, sentNanos, settled);
        if (callerBlocks) {
            conclude(Attempt.acquired(0), null);
        } else {
            runtime.executor().execute(() -> conclude(Attempt.acquired(0), null));
        }
        return hold;
    }

    /** When this acquire started, by the client's clock: a hand-over goes to the waiter that started first. */
    long startedNanos() {
        return startNanos;
    }

    /** The owner field this waiter would hold with. */
    String field() {
        return field;
    }

    /** The lease this waiter's hold gets on Redis. */
    long leaseOnRedis() {
        return runtime.watchdog().leaseFor(leaseMillis);
    }

    /** The ticket this waiter is queued with on Redis, 0 if none (read once it is parked or taken). */
    long queuedTicket() {
        return ticket.current();
    }

    // ---- cancel and abort --------------------------------------------------------------------

    void cancel() {
        cancelled = true;
        Waiter waiter = parked;
        if (waiter != null) {
            waiter.fire();
        }
    }

    /** Ends the wait at once with {@code failure}, e.g. because the client is closing. */
    public void abort(RuntimeException failure) {
        // Set before cancelling: the cancelled attempt may finish first, and must not report a
        // plain "not acquired" to a lock() that has no such answer.
        abortCause = failure;
        cancel();
        passOnWakeUp();
        leave(null, failure);
    }
}
