package io.relock.internal;

import io.relock.AcquireEvent;
import io.relock.RelockConnectionException;
import io.relock.RelockReplicaSyncException;
import io.relock.internal.LockDriver.Attempt;
import io.relock.internal.LockDriver.Request;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquire with its deadline, run as a chain of callbacks rather than a blocked thread:
 * an unlock message triggers the next attempt directly from the I/O thread, and the caller
 * (sync API) only waits for {@link #result}.
 *
 * <pre>
 *   STARTED ─► COUNTING (a re-entry reads its hold count) ─► ATTEMPTING
 *   ATTEMPTING ─► acquired ─► CONFIRMING ──► DONE                 (at once without replica sync)
 *                                        ──► ATTEMPTING (repeat: reconnected), or UNDOING (too few replicas)
 *              ─► busy, time left ─► SUBSCRIBING ─► ATTEMPTING          (pub/sub, first time)
 *                                 ─► PARKED ─► ATTEMPTING               (pub/sub: message or TTL)
 *                                 ─► PAUSED ─► ATTEMPTING               (backoff, or no pub/sub)
 *              ─► busy, no time left, or cancelled ─► LEAVING ─► DONE   (not acquired)
 *              ─► outcome unknown, or acquired after a cancel ─► UNDOING ─► DONE
 *   any state ─► abort (the client closes) ─► DONE
 *   PARKED ─► a release handed the lock to this waiter (its ticket) ─► ATTEMPTING (the claim)
 * </pre>
 *
 * <p>Owner transfer ({@link LockDriver#handsOff()}): once subscribed, each attempt carries this
 * acquisition's ticket and queues it on Redis (one waiter per client and lock, see
 * {@link UnlockChannels.Channel#claimQueue}). A release that makes this waiter the owner sets a
 * short hand-over lease ({@link #GRANT_LEASE_MILLIS}) and publishes the ticket; the ticket wakes
 * this waiter alone, and its next attempt claims the hold with the caller's lease in one round
 * trip. The claim is what makes {@code lock()} return: a waiter whose process was paused past the
 * hand-over lease finds it gone (someone else may hold the lock by then) and waits again, so a
 * pause never makes two holders. A grant that comes after the acquire ended otherwise is passed
 * on by the driver's {@link LockDriver#abandon leave}. A ticket for another client's waiter
 * means the lock may be free within the hand-over lease (its waiter may be dead), so this
 * client's queued waiter then wakes by then at the latest.
 *
 * <p>{@link #cancel()} (an interrupt) only sets a flag and fires a parked waiter early; the next
 * transition sees the flag. Whatever the path, {@link #result} completes once, after the
 * subscription is given back and nothing is held that the caller will not hear of.
 */
final class Acquisition {

    /** Where an acquire is; read by tests and {@link #toString()}, never used to decide. */
    enum State { STARTED, COUNTING, ATTEMPTING, SUBSCRIBING, PARKED, PAUSED, CONFIRMING, UNDOING, LEAVING, DONE }

    private static final Logger LOG = LoggerFactory.getLogger(Acquisition.class);

    /** The longest a waiter parks when it cannot be sure its subscription still hears releases. */
    static final long UNSURE_PARK_MILLIS = 1000;

    private final AcquirableLock lock;
    private final LockClient runtime;
    private final LockDriver driver;
    private final LockKeys keys;
    private final WaitPolicy wait;

    final long owner;
    final CompletableFuture<Attempt> result = new CompletableFuture<>();
    private final long leaseMillis;
    private final long waitNanos;
    private final long startNanos;
    private final String field;
    private final boolean reentry;
    private final AtomicBoolean finished = new AtomicBoolean();
    private int failures;
    private final AtomicReference<UnlockChannels.Channel> subscription = new AtomicReference<>();
    private volatile boolean cancelled;
    private volatile RuntimeException abortCause;
    private volatile UnlockChannels.Waiter parked;
    private volatile long subscribedEpoch;
    private final String ownerThreadName;
    /** The observers at the start and their contexts, or null when nobody observed. */
    private final Observers.Started observed;
    private volatile int holdsAfter;
    private volatile State state = State.STARTED;
    /** Published by the release that hands the lock to this waiter; 0 and 1 are unlock messages. */
    private final long ticket = ThreadLocalRandom.current().nextLong(2, 1L << 62);
    /**
     * How long a hold handed over by a release lasts until its waiter claims it (see
     * {@code handoff.lua}, which sets it): what a waiter that died while next in line costs.
     */
    static final long GRANT_LEASE_MILLIS = 2000;
    /** Past the hand-over lease when a waiter of another client was handed the lock, for clock drift. */
    private static final long GRANT_MARGIN_MILLIS = 50;

    /** An attempt carried the ticket, so Redis may have this waiter queued. Guarded by this. */
    private boolean queued;
    /** An attempt was sent and its reply is not in yet. Guarded by this. */
    private boolean inFlight;
    /** This waiter's ticket was published since its last attempt began: the next one claims the lock. */
    private volatile boolean ticketHeard;

    Acquisition(AcquirableLock lock, long owner, long waitNanos, long leaseMillis) {
        this.lock = lock;
        this.runtime = lock.client();
        this.driver = lock.driver();
        this.keys = lock.keys();
        this.wait = lock.waitPolicy();
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

    void begin() {
        runtime.register(this);
        if (reentry) {
            state = State.COUNTING;
            // Recognising a repeat, and undoing an acquire whose outcome stayed unknown,
            // need the exact count before it; a first acquire starts from 0 and needs no
            // round trip for that.
            driver.holdCount(field).whenComplete((count, error) -> {
                if (error != null) {
                    finish(null, Exceptions.translate(lock.describe("acquire"), error));
                } else {
                    attempt(count);
                }
            });
        } else {
            attempt(0);
        }
    }

    private void attempt(int before) {
        attempt(before, false);
    }

    /** One try; {@code repeat} when an earlier try's effect may stand (its outcome was never seen). */
    private void attempt(int before, boolean repeat) {
        if (cancelled) {
            passOnWakeUp();
            finish(Attempt.NOT_ACQUIRED, null);
            return;
        }
        UnlockChannels.Channel subscribed = subscription.get();
        // Only a waiter that hears its ticket queues it (a first attempt is not subscribed yet),
        // and only one waiter of this client per lock.
        long sentTicket = subscribed != null && driver.handsOff() && subscribed.claimQueue(this) ? ticket : 0;
        synchronized (this) {
            // An attempt that reaches Redis after the hand-off claims it, so the ticket is spent.
            ticketHeard = false;
            inFlight = true;
            queued |= sentTicket != 0;
        }
        state = State.ATTEMPTING;
        long lease = runtime.watchdog().leaseFor(leaseMillis);
        long epoch = runtime.gateway().connectionEpoch();
        // Read before the attempt: a release announced after it, before this waiter parks, is
        // then seen by the park, which retries at once instead of sleeping through it.
        long seen = subscribed != null ? subscribed.messages() : 0;
        CompletableFuture<Attempt> reply;
        try {
            reply = driver.acquire(new Request(field, lease, before, retryBudget(), repeat, sentTicket));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((attempt, error) -> onReply(before, epoch, seen, attempt, error));
    }

    /**
     * How long one try may ride through connection trouble or a failover: to the end of the
     * wait, at least the command timeout; an unbounded {@code lock()} rides through one
     * outage for up to a watchdog timeout, after which any hold would have expired anyway.
     */
    private RedisGateway.Budget retryBudget() {
        long waitDeadline = waitNanos >= Args.FOREVER_NANOS
                ? runtime.nanoTime() + TimeUnit.MILLISECONDS.toNanos(runtime.watchdog().leaseMillis())
                : startNanos + waitNanos;
        return runtime.budget(waitDeadline);
    }

    private void onReply(int before, long epoch, long seen, Attempt attempt, Throwable error) {
        synchronized (this) {
            inFlight = false;
        }
        if (error != null) {
            passOnWakeUp();
            RuntimeException failure = Exceptions.translate(lock.describe("acquire"), error);
            if (Exceptions.outcomeUnknown(error)) {
                // The gateway gave up retrying: undone before the caller hears of it.
                state = State.UNDOING;
                lock.rollback(owner, before, failure).whenComplete((ignored, e) -> finish(null, failure));
            } else {
                finish(null, failure);
            }
            return;
        }
        if (attempt.acquired()) {
            if (cancelled) {
                state = State.UNDOING;
                lock.rollback(owner, before, null).whenComplete((ignored, e) -> finish(Attempt.NOT_ACQUIRED, null));
            } else {
                state = State.CONFIRMING;
                confirm(before, epoch, attempt);
            }
            return;
        }
        long leftNanos = waitNanos - (runtime.nanoTime() - startNanos);
        if (leftNanos <= 0 || cancelled) {
            finish(Attempt.NOT_ACQUIRED, null);
            return;
        }
        long leftMillis = TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1;
        long ttl = attempt.ttlMillis();
        long untilExpiry = ttl > 0 ? Math.min(ttl, leftMillis) : leftMillis;
        failures++;
        if (!wait.subscribes()) {
            pause(before, Math.min(Math.max(1, wait.pauseMillis(failures)), untilExpiry));
            return;
        }
        UnlockChannels.Channel subscribed = subscription.get();
        if (subscribed == null) {
            subscribeThenRetry(before, untilExpiry);
            return;
        }
        if (runtime.gateway().connectionEpoch() != subscribedEpoch) {
            // A connection broke since the subscription was made (a failover, a reconnect):
            // the unlock message may go to a server this client no longer listens to, so a
            // wake-up comes at least every second rather than after the holder's whole TTL.
            untilExpiry = Math.min(untilExpiry, UNSURE_PARK_MILLIS);
        }
        state = State.PARKED;
        UnlockChannels.Waiter waiter = subscribed.park(() -> attempt(before), untilExpiry, seen);
        parked = waiter;
        // A ticket heard while the attempt was in flight (it ran before the hand-off), or since.
        if (cancelled || ticketHeard) {
            waiter.fire();
        }
    }

    /**
     * Keeps the acquire only once it is confirmed (with replica sync, once enough replicas have
     * it): a failover to a replica without it would hand the lock to someone else while this
     * owner believes it holds it.
     */
    private void confirm(int before, long epoch, Attempt attempt) {
        WriteGateway gateway = runtime.gateway();
        gateway.confirmWrite(keys.key(), epoch).whenComplete((confirmation, error) -> {
            if (error == null && confirmation.confirmed()) {
                // Claimed before the hold is recorded: a close that ended the wait meanwhile has
                // told the caller it failed, so the acquire is undone rather than left held.
                if (finished.compareAndSet(false, true)) {
                    held(before + 1);
                    ended(attempt, null);
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
            state = State.UNDOING;
            lock.rollback(owner, before, failure).whenComplete((ignored, rollbackError) -> finish(null, failure));
        });
    }

    private void held(int count) {
        holdsAfter = count;
        runtime.watchdog().acquired(lock, owner, field, leaseMillis, count, ownerThreadName);
    }

    /**
     * A release published this waiter's ticket: it handed the lock over, for the hand-over lease.
     * The parked waiter claims it now; one in flight when its reply is in (see {@link #onReply}).
     */
    private void onGrant() {
        synchronized (this) {
            ticketHeard = true;
            if (inFlight) {
                return;
            }
        }
        UnlockChannels.Waiter waiter = parked;
        if (waiter != null) {
            waiter.fire();
        }
    }

    /**
     * A release handed the lock to a waiter of another client: if that waiter is dead, the lock
     * is free when the hand-over lease runs out, and nobody announces it, so this client's queued
     * waiter looks by then rather than at the holder's TTL it was told.
     */
    void grantedElsewhere() {
        UnlockChannels.Waiter waiter = parked;
        if (waiter != null) {
            waiter.fireWithin(runtime.timer(), GRANT_LEASE_MILLIS + GRANT_MARGIN_MILLIS);
        }
    }

    /** Waits without pub/sub: a timer starts the next attempt (the spin lock's way). */
    private void pause(int before, long millis) {
        state = State.PAUSED;
        UnlockChannels.Waiter waiter = UnlockChannels.timed(runtime.timer(), () -> attempt(before), millis);
        parked = waiter;
        if (cancelled) {
            waiter.fire();
        }
    }

    private void subscribeThenRetry(int before, long untilExpiry) {
        state = State.SUBSCRIBING;
        runtime.channels().subscribe(driver.channelFor(keys, field)).whenComplete((subscribed, error) -> {
            if (error != null) {
                // Only the pub/sub connection is in trouble (e.g. a proxy or an output buffer
                // limit dropped it): wait by polling until it is back, within the wait.
                LOG.debug("cannot subscribe to the unlock channel of lock '{}' ({}); polling", lock.getName(),
                        Exceptions.unwrap(error).toString());
                pause(before, Math.min(untilExpiry, RedisGateway.MAX_RETRY_PAUSE_MILLIS));
                return;
            }
            subscribedEpoch = runtime.gateway().connectionEpoch();
            if (driver.handsOff()) {
                subscribed.expectGrant(ticket, this::onGrant);
            }
            subscription.set(subscribed);
            if (finished.get()) {
                releaseSubscription();
            } else {
                // The holder may have released before the subscription was in place.
                attempt(before);
            }
        });
    }

    void cancel() {
        cancelled = true;
        UnlockChannels.Waiter waiter = parked;
        if (waiter != null) {
            waiter.fire();
        }
    }

    /** Ends the wait at once with {@code failure}, e.g. because the client is closing. */
    void abort(RuntimeException failure) {
        // Set before cancelling: the cancelled attempt may finish first, and must not
        // report a plain "not acquired" to a lock() that has no such answer.
        abortCause = failure;
        cancel();
        passOnWakeUp();
        finish(null, failure);
    }

    /**
     * Called where this waiter ends without an attempt that answered "busy" after its last
     * wake-up: that wake-up may have been a release meant for some waiter of this client, and
     * must not end here (the others would sleep until the holder's TTL).
     */
    private void passOnWakeUp() {
        UnlockChannels.Channel subscribed = subscription.get();
        if (subscribed != null) {
            subscribed.passOn();
        }
    }

    private void finish(Attempt outcome, RuntimeException error) {
        if (finished.compareAndSet(false, true)) {
            ended(outcome, error);
        }
    }

    /** The one end of the acquire, once {@link #finished} is claimed. */
    private void ended(Attempt outcome, RuntimeException error) {
        // A close's cause replaces "not acquired" only: an acquire that won is reported as held.
        boolean acquired = outcome != null && outcome.acquired();
        RuntimeException failure = error != null || acquired ? error : abortCause;
        runtime.unregister(this);
        if (acquired) {
            releaseSubscription();
            complete(outcome, failure);
            return;
        }
        state = State.LEAVING;
        long leaving;
        synchronized (this) {
            leaving = queued ? ticket : 0;
        }
        driver.abandon(field, leaving).whenComplete((ignored, abandonError) -> {
            if (abandonError != null) {
                // A fair lock's queue then keeps this waiter until threadWaitTime drops it.
                LOG.debug("could not leave the waiters of lock '{}' ({})", lock.getName(),
                        Exceptions.unwrap(abandonError).toString());
            }
            // Given back only now: the next waiter of this client queues once this entry is gone.
            releaseSubscription();
            complete(outcome, failure);
        });
    }

    private void complete(Attempt outcome, RuntimeException failure) {
        state = State.DONE;
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

    private void releaseSubscription() {
        UnlockChannels.Channel subscribed = subscription.getAndSet(null);
        if (subscribed != null) {
            subscribed.forgetGrant(ticket);
            subscribed.leaveQueue(this);
            runtime.channels().release(subscribed);
        }
    }

    State state() {
        return state;
    }

    @Override
    public String toString() {
        return "Acquisition{lock='" + lock.getName() + "', owner=" + owner + ", state=" + state
                + (cancelled ? ", cancelled" : "") + "}";
    }
}
