package io.relock.internal;

import io.relock.AcquireEvent;
import io.relock.RelockConnectionException;
import io.relock.RelockException;
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
 *   STARTED ─► another owner of this client holds the lock or is queued for it
 *           ─► SUBSCRIBING ─► PARKED (behind it, nothing asked of Redis)
 *   ATTEMPTING ─► acquired ─► CONFIRMING ──► DONE                 (at once without replica sync)
 *                                        ──► ATTEMPTING (repeat: reconnected), or UNDOING (too few replicas)
 *              ─► busy, time left ─► SUBSCRIBING ─► ATTEMPTING          (pub/sub, first time)
 *                                 ─► PARKED ─► ATTEMPTING               (pub/sub: message or TTL)
 *                                 ─► PAUSED ─► ATTEMPTING               (backoff, or no pub/sub)
 *              ─► busy, no time left, or cancelled ─► LEAVING ─► DONE   (not acquired)
 *              ─► outcome unknown, or acquired after a cancel ─► UNDOING ─► DONE
 *   any state ─► abort (the client closes) ─► DONE
 *   PARKED ─► a release of another client handed the lock to this waiter (its ticket)
 *          ─► DONE (claim sent, not awaited), or ATTEMPTING (the claim, awaited)
 *   PARKED ─► a release of another owner of this client handed its hold to this waiter ─► DONE
 * </pre>
 *
 * <p>Owner transfer ({@link LockDriver#handsOff()}): once subscribed, each attempt queues this
 * waiter on Redis with a new ticket (one waiter per client and lock, see
 * {@link UnlockChannels.Channel#claimQueue}), replacing the ticket of its attempt before. A
 * release that makes this waiter the owner sets a short hand-over lease
 * ({@link #GRANT_LEASE_MILLIS}) and publishes the ticket; the ticket wakes this waiter alone. The
 * waiter then claims the hold with the caller's lease, and whether {@code lock()} waits for the
 * claim depends on what the waiter can prove about the hand-over lease. The attempt that queued
 * the ticket ran before the hand-off (a later attempt replaces the ticket), so the lease ends no
 * sooner than {@link #GRANT_LEASE_MILLIS} after that attempt was sent, by any clock that runs at
 * the server's rate. When less than {@link #FAST_CLAIM_WINDOW_MILLIS} has passed since, the claim
 * is sent and {@code lock()} returns without waiting for it: the claim reaches Redis with at least
 * the rest of the window to spare, and later writes about the hold wait for it (see
 * {@link Hold#pending}); if it fails anyway, the hold is reported lost. Otherwise (a waiter that
 * was paused, or that queued long ago) {@code lock()} returns only once the claim took the hold, and
 * a waiter whose hand-over lease ran out finds the lock gone and waits again: a pause never makes
 * two holders. A grant that comes after the acquire ended otherwise is passed on by the driver's
 * {@link LockDriver#abandon leave}. A ticket for another client's waiter means the lock may be
 * free within the hand-over lease (its waiter may be dead), so this client's queued waiter then
 * wakes by then at the latest.
 *
 * <p>Between owners of one client the lock does not go through the queue: while another owner of
 * this client holds the lock or is queued for it, a waiter parks behind it without asking Redis,
 * and the holder's last release hands its hold straight to a parked waiter
 * ({@link LockEngine}, {@link LockDriver#transfer}), which returns from {@code lock()} at once.
 *
 * <p>{@link #cancel()} (an interrupt) only sets a flag and fires a parked waiter early; the next
 * transition sees the flag. Whatever the path, {@link #result} completes once, with nothing held
 * that the caller will not hear of. An acquire that failed or gave up completes after its
 * subscription is given back; one that won gives it back just after, so that the caller's
 * thread is woken before the unsubscribe is written.
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
    /**
     * Whether the caller blocks on {@link #result} (the synchronous API), so that completing it
     * only wakes that thread; else its completion runs the caller's own continuations.
     */
    private final boolean callerBlocks;
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
    /**
     * How long a hold handed over by a release lasts until its waiter claims it (see
     * {@code handoff.lua}, which sets it): what a waiter that died while next in line costs.
     */
    static final long GRANT_LEASE_MILLIS = 2000;
    /**
     * A waiter claims a hand-off without waiting for the claim when its ticket was queued less than
     * this long ago: the claim then has at least the other half of the hand-over lease to arrive.
     */
    static final long FAST_CLAIM_WINDOW_MILLIS = GRANT_LEASE_MILLIS / 2;
    /** Past the hand-over lease when a waiter of another client was handed the lock, for clock drift. */
    private static final long GRANT_MARGIN_MILLIS = 50;

    /** The owner's hold count before this acquire, as the last attempt sent it. */
    private volatile int before;
    /**
     * The ticket of the last attempt, which queued this waiter on Redis with it, or 0 if it did
     * not queue; a ticket above 1 is what the release that hands the lock to this waiter
     * publishes (0 and 1 are unlock messages). Guarded by this.
     */
    private long ticket;
    /** When the attempt that queued {@link #ticket} was sent. Guarded by this. */
    private long ticketSentNanos;
    /** An attempt was sent and its reply is not in yet. Guarded by this. */
    private boolean inFlight;
    /** This waiter's ticket was published since its last attempt began: the next one claims the lock. */
    private volatile boolean ticketHeard;

    /** An acquire whose caller takes the result as a stage (see {@link #callerBlocks}). */
    Acquisition(AcquirableLock lock, long owner, long waitNanos, long leaseMillis) {
        this(lock, owner, waitNanos, leaseMillis, false);
    }

    Acquisition(AcquirableLock lock, long owner, long waitNanos, long leaseMillis, boolean callerBlocks) {
        this.callerBlocks = callerBlocks;
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
        Hold held = reentry ? runtime.watchdog().get(lock, owner) : null;
        if (held != null && held.writePending()) {
            // The owner was told it held before Redis answered the hand-over. Counted meanwhile, a
            // re-entry would make a retry of that write (its reply lost) misjudge the count and add
            // a hold nobody knows of; so it follows the write, as a release does.
            held.pending.thenRun(() -> {
                if (!finished.get()) {
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
            subscribeThen(0, TimeUnit.NANOSECONDS.toMillis(waitNanos) + 1, true);
        } else if (reentry) {
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
        this.before = before;
        UnlockChannels.Channel subscribed = subscription.get();
        // Only a waiter that hears its ticket queues (a first attempt is not subscribed yet), and
        // only one waiter of this client per lock.
        long newTicket = subscribed != null && driver.handsOff() && subscribed.claimQueue(this) ? newTicket() : 0;
        if (newTicket != 0) {
            subscribed.expectGrant(newTicket, () -> onGrant(newTicket));
        }
        long sentNanos = runtime.nanoTime();
        long queuedTicket;
        synchronized (this) {
            // This attempt claims a hand-off to the ticket before it, so that one is spent.
            ticketHeard = false;
            inFlight = true;
            queuedTicket = ticket;
            ticket = newTicket;
            ticketSentNanos = sentNanos;
        }
        state = State.ATTEMPTING;
        long lease = runtime.watchdog().leaseFor(leaseMillis);
        long epoch = runtime.gateway().connectionEpoch();
        // Read before the attempt: a release announced after it, before this waiter parks, is
        // then seen by the park, which retries at once instead of sleeping through it.
        long seen = subscribed != null ? subscribed.messages() : 0;
        CompletableFuture<Attempt> reply;
        try {
            reply = driver.acquire(new Request(field, lease, before, retryBudget(), repeat, newTicket, queuedTicket,
                    callerBlocks));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((attempt, error) -> {
            if (queuedTicket != 0 && subscribed != null) {
                // A hand-off to it happened before this attempt ran, which then claimed it, or lapsed.
                subscribed.forgetGrant(queuedTicket);
            }
            onReply(before, epoch, seen, sentNanos, attempt, error);
        });
    }

    /** A ticket: a random number of 2 or more, so that it never reads as an unlock message. */
    private static long newTicket() {
        return ThreadLocalRandom.current().nextLong(2, 1L << 62);
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

    private void onReply(int before, long epoch, long seen, long sentNanos, Attempt attempt, Throwable error) {
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
                confirm(before, epoch, sentNanos, attempt);
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
        // A TTL of 0 is a hold (or a yield, see handoff.lua) in its last millisecond, not one
        // without expiry (-1): parking for the whole wait would sleep through its end.
        long untilExpiry = ttl >= 0 ? Math.min(Math.max(ttl, 1), leftMillis) : leftMillis;
        failures++;
        if (!wait.subscribes()) {
            pause(before, Math.min(Math.max(1, wait.pauseMillis(failures)), untilExpiry));
            return;
        }
        UnlockChannels.Channel subscribed = subscription.get();
        if (subscribed == null) {
            subscribeThen(before, untilExpiry, false);
            return;
        }
        if (runtime.gateway().connectionEpoch() != subscribedEpoch) {
            // A connection broke since the subscription was made (a failover, a reconnect):
            // the unlock message may go to a server this client no longer listens to, so a
            // wake-up comes at least every second rather than after the holder's whole TTL.
            untilExpiry = Math.min(untilExpiry, UNSURE_PARK_MILLIS);
        }
        state = State.PARKED;
        UnlockChannels.Waiter waiter = subscribed.park(this, () -> attempt(before), untilExpiry, seen);
        parked = waiter;
        if (cancelled) {
            waiter.fire();
        } else if (ticketHeard) {
            // A ticket heard while the attempt was in flight (it ran before the hand-off), or since.
            claimGrant(waiter);
        }
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
                // Claimed before the hold is recorded: a close that ended the wait meanwhile has
                // told the caller it failed, so the acquire is undone rather than left held.
                if (finished.compareAndSet(false, true)) {
                    held(before + 1, sentNanos, null);
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

    /** Records the hold, whose lease started no earlier than {@code sentNanos}; see {@link Hold#pending}. */
    private Hold held(int count, long sentNanos, CompletableFuture<Void> pending) {
        holdsAfter = count;
        return runtime.watchdog().acquired(lock, owner, field, leaseMillis, count, ownerThreadName, sentNanos, pending);
    }

    /**
     * A release published {@code granted}, a ticket of this waiter: it handed the lock over, for
     * the hand-over lease. The parked waiter claims it now; one in flight when its reply is in
     * (see {@link #onReply}). A ticket an attempt since has replaced is stale: that attempt
     * claimed the hand-off, or it had lapsed.
     */
    private void onGrant(long granted) {
        UnlockChannels.Waiter waiter;
        synchronized (this) {
            if (granted != ticket) {
                return;
            }
            ticketHeard = true;
            if (inFlight) {
                return;
            }
            waiter = parked;
        }
        if (waiter != null) {
            claimGrant(waiter);
        }
    }

    /**
     * Claims the hand-off to the parked {@code waiter}: without waiting for the claim when its
     * ticket is fresh enough (see the class comment), else by an attempt that {@code lock()} waits for.
     */
    private void claimGrant(UnlockChannels.Waiter waiter) {
        boolean fresh;
        synchronized (this) {
            fresh = ticket != 0 && runtime.nanoTime() - ticketSentNanos
                    <= TimeUnit.MILLISECONDS.toNanos(FAST_CLAIM_WINDOW_MILLIS);
        }
        // With replica sync the claim must be confirmed by replicas before the caller holds; a
        // cancelled waiter's attempt ends it, and its leave passes the hand-off on.
        if (fresh && !cancelled && runtime.gateway().replicaSyncMinReplicas() == 0 && waiter.take()) {
            adoptGrant();
        } else {
            waiter.fire();
        }
    }

    /**
     * Takes the lock a release handed to this waiter: sends the claim, records the hold with the
     * claim as its pending write, and ends as acquired without waiting for the reply. A claim that
     * finds the hand-off gone makes the hold lost; one whose outcome stays unknown is undone too.
     */
    private void adoptGrant() {
        if (!finished.compareAndSet(false, true)) {
            // Ended otherwise (the client closing): its leave passes the hand-off on.
            return;
        }
        if (cancelled) {
            // Interrupted meanwhile: not acquired, and the leave passes the hand-off on.
            ended(Attempt.NOT_ACQUIRED, null);
            return;
        }
        long claimed;
        synchronized (this) {
            claimed = ticket;
        }
        int countBefore = before;
        long sentNanos = runtime.nanoTime();
        // The caller is told first and the claim sent after: its later calls about the hold wait
        // for the claim's reply anyway, and on a busy machine its thread starts sooner this way.
        CompletableFuture<Attempt> claim = new CompletableFuture<>();
        // What the owner's next calls wait for: the claim, and the loss and undo it may bring.
        CompletableFuture<Void> settled = new CompletableFuture<>();
        Hold hold = held(countBefore + 1, sentNanos, settled);
        claim.whenComplete((attempt, error) -> {
            boolean undoing = false;
            try {
                if (error == null && attempt.acquired()) {
                    return;
                }
                RuntimeException cause = error != null
                        ? Exceptions.translate(lock.describe("claim the hand-off of"), error)
                        : new RelockException("the hand-off of lock '" + lock.getName() + "' to " + field
                                + " had lapsed when its claim reached Redis");
                runtime.watchdog().lost(hold, cause);
                if (error != null && Exceptions.outcomeUnknown(error)) {
                    undoing = true;
                    lock.rollback(owner, countBefore, cause).whenComplete((undone, undoError) -> settled.complete(null));
                }
            } finally {
                if (!undoing) {
                    settled.complete(null);
                }
            }
        });
        ended(Attempt.acquired(0), null);
        try {
            driver.acquire(new Request(field, runtime.watchdog().leaseFor(leaseMillis), countBefore, retryBudget(),
                    false, 0, claimed, false)).whenComplete((attempt, error) -> {
                        if (error != null) {
                            claim.completeExceptionally(error);
                        } else {
                            claim.complete(attempt);
                        }
                    });
        } catch (RuntimeException e) {
            claim.completeExceptionally(e);
        }
    }

    /**
     * Whether a release of {@code key} by another owner of this client may hand its hold to this
     * waiter: a first acquire of a type that hands off, still waiting.
     */
    boolean mayTakeHandOver(String key) {
        return !reentry && driver.handsOff() && keys.key().equals(key) && !cancelled && !finished.get()
                && runtime.nanoTime() - startNanos < waitNanos;
    }

    /** Claims this waiter for a hand-over (after {@link UnlockChannels.Channel#takeForHandOver}): false if it ended. */
    boolean claimForHandOver() {
        return finished.compareAndSet(false, true);
    }

    /**
     * A release of another owner of this client handed its hold to this waiter with a transfer
     * sent at {@code sentNanos}, which {@code settled} follows (see {@link Hold#pending}): the hold
     * is recorded, and the acquire ends as acquired at once (for an async caller, on the client's
     * worker threads).
     */
    Hold handedOver(long sentNanos, CompletableFuture<Void> settled) {
        Hold hold = held(1, sentNanos, settled);
        if (callerBlocks) {
            ended(Attempt.acquired(0), null);
        } else {
            // Not on the releasing owner's thread: an async caller's continuations would run in its unlock().
            runtime.executor().execute(() -> ended(Attempt.acquired(0), null));
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
    synchronized long queuedTicket() {
        return ticket;
    }

    /** Whether the engine would rather wait behind another owner of this client than ask Redis. */
    private boolean mayWaitBehindOwnClient() {
        return !reentry && waitNanos > 0 && wait.subscribes() && driver.handsOff()
                && runtime.gateway().replicaSyncMinReplicas() == 0;
    }

    /** Whether another owner of this client holds this lock, or a waiter of this client is queued for it. */
    private boolean busyHere() {
        if (runtime.watchdog().heldByOthers(keys.key(), field) >= 0) {
            return true;
        }
        UnlockChannels.Channel channel = runtime.channels().existing(driver.channelFor(keys, field));
        return channel != null && channel.hasQueuedWaiter();
    }

    /**
     * Parks behind this client's holder or queued waiter, without asking Redis: a release of the
     * holder hands the lock over, or one of them leaving wakes a parked waiter, which then asks
     * Redis itself. Wakes at the latest when the holder's lease as this client knows it ends.
     */
    private void parkBehindOwnClient(UnlockChannels.Channel subscribed) {
        long seen = subscribed.messages();
        long leftNanos = waitNanos - (runtime.nanoTime() - startNanos);
        if (leftNanos <= 0 || cancelled) {
            finish(Attempt.NOT_ACQUIRED, null);
            return;
        }
        long holderLease = runtime.watchdog().heldByOthers(keys.key(), field);
        long untilLook = Math.min(TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1,
                holderLease >= 0 ? holderLease + 1 : runtime.watchdog().leaseMillis());
        state = State.PARKED;
        UnlockChannels.Waiter waiter = subscribed.park(this, () -> attempt(0), untilLook, seen);
        parked = waiter;
        // The holder may have released, or the queued waiter left, before this waiter was parked
        // where they look for one: then it asks Redis itself.
        if (cancelled || !busyHere()) {
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

    /**
     * Subscribes to the unlock channel, then attempts again (the holder may have released before
     * the subscription was in place), or, {@code behindOwnClient}, parks behind this client's
     * holder or queued waiter.
     */
    private void subscribeThen(int before, long untilExpiry, boolean behindOwnClient) {
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
            subscription.set(subscribed);
            if (finished.get()) {
                releaseSubscription(false);
            } else if (behindOwnClient) {
                parkBehindOwnClient(subscribed);
            } else {
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
            // Told first: the caller's thread then starts while the unsubscribe is written.
            complete(outcome, failure);
            releaseSubscription(true);
            return;
        }
        state = State.LEAVING;
        long leaving;
        synchronized (this) {
            leaving = ticket;
        }
        driver.abandon(field, leaving).whenComplete((ignored, abandonError) -> {
            if (abandonError != null) {
                // A fair lock's queue then keeps this waiter until threadWaitTime drops it.
                LOG.debug("could not leave the waiters of lock '{}' ({})", lock.getName(),
                        Exceptions.unwrap(abandonError).toString());
            }
            // Given back only now: the next waiter of this client queues once this entry is gone.
            releaseSubscription(false);
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

    /** Gives the subscription back; {@code held} when this acquire ended holding the lock. */
    private void releaseSubscription(boolean held) {
        UnlockChannels.Channel subscribed = subscription.getAndSet(null);
        if (subscribed != null) {
            long last;
            synchronized (this) {
                last = ticket;
            }
            if (last != 0) {
                subscribed.forgetGrant(last);
            }
            subscribed.leaveQueue(this, held);
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
