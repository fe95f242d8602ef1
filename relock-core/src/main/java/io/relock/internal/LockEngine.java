package io.relock.internal;

import io.relock.AcquireEvent;
import io.relock.internal.LockDriver.Attempt;
import io.relock.internal.LockDriver.Request;
import io.relock.DistributedLock;
import io.relock.ForceUnlockEvent;
import io.relock.ReleaseEvent;
import io.relock.RelockConnectionException;
import io.relock.RelockReplicaSyncException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one lock engine: argument checks, the wait loop (attempt, then wait as the
 * {@link WaitPolicy} says, attempt again), interrupt and timeout handling, undoing acquires
 * whose reply was lost, replica sync, release bookkeeping, the watchdog hand-off and the
 * observer events. A lock type is a {@link LockDriver} (its scripts) and a wait policy; the
 * engine is the same for all of them.
 *
 * <p>Follow {@code lock()}: {@link #start} makes an {@link Acquisition}, which calls
 * {@link LockDriver#acquire} until it holds the lock, the wait ends or the caller gives up, and
 * parks between attempts. Follow {@code unlock()}: {@link #release} calls
 * {@link LockDriver#release} with the hold count the watchdog keeps, and forgets the hold when
 * the last one is gone.
 */
public final class LockEngine implements DistributedLock, EngineBacked {

    private static final Logger LOG = LoggerFactory.getLogger(LockEngine.class);

    /** The longest a waiter parks when it cannot be sure its subscription still hears releases. */
    static final long UNSURE_PARK_MILLIS = 1000;

    final ClientRuntime runtime;
    private final LockKeys keys;
    private final LockDriver driver;
    private final WaitPolicy wait;

    LockEngine(ClientRuntime runtime, LockKeys keys, LockDriver driver, WaitPolicy wait) {
        this.runtime = runtime;
        this.keys = keys;
        this.driver = driver;
        this.wait = wait;
    }

    @Override
    public LockEngine engine() {
        return this;
    }

    // ---- identity ----------------------------------------------------------------------------

    @Override
    public String getName() {
        return keys.name();
    }

    /** The Redis key (the name with the configured prefix). */
    String key() {
        return keys.key();
    }

    /** The channel that unlock messages of this lock are published on. */
    String channel() {
        return keys.channel();
    }

    /** This lock type's name, as {@link io.relock.HeldLock#type()} and the observer events give it. */
    String type() {
        return driver.type();
    }

    /** The script that renews this lock type's holds in the watchdog's batches. */
    Script renewScript() {
        return driver.renewScript();
    }

    /** The hash field (or token) that identifies {@code owner} in this lock type's data. */
    String fieldOf(long owner) {
        return driver.fieldOf(runtime.field(owner));
    }

    void checkOpen() {
        runtime.checkOpen();
    }

    @Override
    public boolean forceUnlock() {
        runtime.checkOpen();
        boolean removed = Futures.await(driver.forceRelease(), describe("force-unlock")) == 1;
        Observers observers = runtime.observers();
        if (observers.any()) {
            observers.forceUnlocked(new ForceUnlockEvent(getName(), type(), removed));
        }
        return removed;
    }

    static long currentThreadId() {
        return Thread.currentThread().getId();
    }

    private String describe(String operation) {
        return operation + " " + (driver.type().equals("read") || driver.type().equals("write") ? driver.type() + " " : "")
                + "lock '" + getName() + "'";
    }

    @Override
    public String toString() {
        return "Lock{type=" + type() + ", name='" + getName() + "', wait=" + wait + "}";
    }

    // ---- synchronous API ---------------------------------------------------------------------

    @Override
    public void lock() {
        acquireUninterruptibly(Args.FOREVER_NANOS, Args.WATCHDOG_LEASE);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(Args.FOREVER_NANOS, Args.leaseMillis(leaseTime, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquireInterruptibly(Args.FOREVER_NANOS, Args.WATCHDOG_LEASE);
    }

    @Override
    public void lockInterruptibly(long leaseTime, TimeUnit unit) throws InterruptedException {
        acquireInterruptibly(Args.FOREVER_NANOS, Args.leaseMillis(leaseTime, unit));
    }

    @Override
    public boolean tryLock() {
        return acquireUninterruptibly(0, Args.WATCHDOG_LEASE).acquired();
    }

    @Override
    public boolean tryLock(long waitTime, TimeUnit unit) throws InterruptedException {
        return acquireInterruptibly(Args.waitNanos(waitTime, unit), Args.WATCHDOG_LEASE).acquired();
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireInterruptibly(Args.waitNanos(waitTime, unit), lease).acquired();
    }

    @Override
    public void unlock() {
        Futures.await(release(currentThreadId()), describe("unlock"));
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return isHeldByThread(currentThreadId());
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        return holdCount(threadId) > 0;
    }

    @Override
    public int getHoldCount() {
        return holdCount(currentThreadId());
    }

    private int holdCount(long owner) {
        runtime.checkOpen();
        return Futures.await(driver.holdCount(fieldOf(owner)), describe("read hold count of"));
    }

    @Override
    public boolean isLocked() {
        runtime.checkOpen();
        return Futures.await(driver.isLocked(), describe("check"));
    }

    @Override
    public long remainTimeToLive() {
        runtime.checkOpen();
        return Futures.await(runtime.gateway().read(commands -> commands.pttl(keys.key())), describe("read TTL of"));
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed locks have no conditions: lock '" + getName()
                + "' cannot create one; use a Redis list or stream to signal between processes");
    }

    /** Acquires for the calling thread; an interrupt is remembered, not obeyed. */
    Attempt acquireUninterruptibly(long waitNanos, long leaseMillis) {
        Acquisition acquisition = start(currentThreadId(), waitNanos, leaseMillis);
        return Futures.await(acquisition.result, describe("acquire"));
    }

    /** Acquires for the calling thread; an interrupt ends the wait with nothing held. */
    Attempt acquireInterruptibly(long waitNanos, long leaseMillis) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring lock '" + getName() + "'");
        }
        Acquisition acquisition = start(currentThreadId(), waitNanos, leaseMillis);
        try {
            return acquisition.result.get();
        } catch (ExecutionException e) {
            throw Exceptions.translate(describe("acquire"), e);
        } catch (InterruptedException interrupt) {
            acquisition.cancel();
            settleAfterInterrupt(acquisition, interrupt);
            throw interrupt;
        }
    }

    /**
     * After an interrupt, waits (bounded by the command timeouts involved) for the attempt in
     * flight to settle, so that the subscription is gone and no hold is left when the caller
     * sees the {@link InterruptedException}. A hold won in that window is released again.
     */
    private void settleAfterInterrupt(Acquisition acquisition, InterruptedException interrupt) {
        long bound = 3 * runtime.config().commandTimeout().toMillis() + 1000;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(bound);
        while (true) {
            try {
                if (acquisition.result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                        .acquired()) {
                    release(acquisition.owner).get(bound, TimeUnit.MILLISECONDS);
                }
                return;
            } catch (InterruptedException again) {
                // Already on the way out with an InterruptedException; keep settling.
            } catch (ExecutionException | TimeoutException e) {
                interrupt.addSuppressed(Exceptions.translate(describe("settle interrupted acquire of"), e));
                return;
            }
        }
    }

    // ---- asynchronous API --------------------------------------------------------------------

    @Override
    public CompletionStage<Void> lockAsync(long ownerThreadId) {
        return acquireAsync(ownerThreadId, Args.FOREVER_NANOS, Args.WATCHDOG_LEASE).thenApply(attempt -> null);
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerThreadId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireAsync(ownerThreadId, Args.FOREVER_NANOS, lease).thenApply(attempt -> null);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerThreadId) {
        return acquireAsync(ownerThreadId, 0, Args.WATCHDOG_LEASE).thenApply(Attempt::acquired);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerThreadId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireAsync(ownerThreadId, Args.waitNanos(waitTime, unit), lease).thenApply(Attempt::acquired);
    }

    /** Acquires for an explicit owner, without blocking. */
    CompletableFuture<Attempt> acquireAsync(long owner, long waitNanos, long leaseMillis) {
        return start(owner, waitNanos, leaseMillis).result;
    }

    @Override
    public CompletionStage<Void> unlockAsync(long ownerThreadId) {
        return release(ownerThreadId);
    }

    // ---- the engine --------------------------------------------------------------------------

    private Acquisition start(long owner, long waitNanos, long leaseMillis) {
        runtime.checkOpen();
        Acquisition acquisition = new Acquisition(owner, waitNanos, leaseMillis);
        acquisition.begin();
        return acquisition;
    }

    /** Releases one hold of {@code owner}; fails with IllegalMonitorStateException if it holds none. */
    CompletableFuture<Void> release(long owner) {
        runtime.checkOpen();
        String field = fieldOf(owner);
        Hold hold = runtime.watchdog().get(this, owner);
        long lease = hold != null ? hold.leaseMillis : runtime.watchdog().leaseMillis();
        if (hold != null) {
            hold.releasing.incrementAndGet();
        }
        int held = hold != null ? hold.count : 0;
        CompletableFuture<Long> reply;
        try {
            reply = driver.release(new Request(field, lease, held, runtime.gateway().budget(), false));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.handle((outcome, error) -> {
            if (hold != null) {
                hold.releasing.decrementAndGet();
            }
            if (error != null) {
                throw Exceptions.translate(describe("unlock"), error);
            }
            if (outcome == null) {
                if (hold == null) {
                    throw Exceptions.notHeld(getName(), field);
                }
                runtime.watchdog().forget(hold);
                released(hold, ReleaseEvent.Outcome.LOST);
                throw Exceptions.holdLost(getName(), field, hold.leaseMillis, hold.watchdog, hold.lossCause);
            }
            if (hold != null) {
                if (outcome == 1) {
                    runtime.watchdog().forget(hold);
                    released(hold, ReleaseEvent.Outcome.RELEASED);
                } else {
                    hold.count = held - 1;
                }
            }
            return null;
        });
    }

    private void released(Hold hold, ReleaseEvent.Outcome outcome) {
        Observers observers = runtime.observers();
        if (observers.any()) {
            observers.released(new ReleaseEvent(getName(), type(), hold.owner,
                    runtime.nanoTime() - hold.acquiredAtNanos, outcome));
        }
    }

    private CompletableFuture<Long> rollback(long owner, int countBefore, Throwable reason) {
        String field = fieldOf(owner);
        CompletableFuture<Long> undo;
        try {
            undo = driver.rollback(field, countBefore);
        } catch (RuntimeException e) {
            undo = CompletableFuture.failedFuture(e);
        }
        return undo.whenComplete((undone, error) -> {
            if (error != null) {
                // The lease still bounds it: without a recorded hold the watchdog never renews it.
                LOG.warn("could not undo an uncertain acquire of lock '{}' by {} ({}); it expires with its lease",
                        getName(), field, Exceptions.unwrap(error).toString());
                if (reason != null) {
                    reason.addSuppressed(Exceptions.unwrap(error));
                }
            } else if (undone != null && undone == 1) {
                LOG.debug("undid an acquire of lock '{}' by {} whose outcome was not seen", getName(), field);
            }
        });
    }

    /**
     * One acquire with its deadline, run as a chain of callbacks rather than a blocked thread:
     * an unlock message triggers the next attempt directly from the I/O thread, and the caller
     * (sync API) only waits for {@link #result}.
     */
    final class Acquisition {

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
        /** The observers' contexts from the start, or null when nobody observes. */
        private final Object[] observed;
        private volatile int holdsAfter;

        Acquisition(long owner, long waitNanos, long leaseMillis) {
            this.owner = owner;
            this.waitNanos = waitNanos;
            this.leaseMillis = leaseMillis;
            this.startNanos = runtime.nanoTime();
            this.field = fieldOf(owner);
            Thread caller = Thread.currentThread();
            this.ownerThreadName = caller.getId() == owner ? caller.getName() : null;
            Observers observers = runtime.observers();
            this.observed = observers.any() ? observers.acquireStarted(getName(), type(), owner) : null;
            // A lost hold may still be on Redis (the renewal failed, the key did not expire yet):
            // its count is read too, else a repeat would be judged against the wrong count.
            this.reentry = runtime.watchdog().get(LockEngine.this, owner) != null;
        }

        void begin() {
            runtime.register(this);
            if (reentry) {
                // Recognising a repeat, and undoing an acquire whose outcome stayed unknown,
                // need the exact count before it; a first acquire starts from 0 and needs no
                // round trip for that.
                driver.holdCount(field).whenComplete((count, error) -> {
                    if (error != null) {
                        finish(null, Exceptions.translate(describe("acquire"), error));
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
                finish(Attempt.NOT_ACQUIRED, null);
                return;
            }
            long lease = leaseMillis == Args.WATCHDOG_LEASE ? runtime.watchdog().leaseMillis() : leaseMillis;
            long epoch = runtime.gateway().connectionEpoch();
            CompletableFuture<Attempt> reply;
            try {
                reply = driver.acquire(new Request(field, lease, before, retryBudget(), repeat));
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.whenComplete((attempt, error) -> onReply(before, epoch, attempt, error));
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
            return runtime.gateway().budget(waitDeadline);
        }

        private void onReply(int before, long epoch, Attempt attempt, Throwable error) {
            if (error != null) {
                RuntimeException failure = Exceptions.translate(describe("acquire"), error);
                if (Exceptions.outcomeUnknown(error)) {
                    // The gateway gave up retrying: undone before the caller hears of it.
                    rollback(owner, before, failure).whenComplete((ignored, e) -> finish(null, failure));
                } else {
                    finish(null, failure);
                }
                return;
            }
            if (attempt.acquired()) {
                if (cancelled) {
                    rollback(owner, before, null).whenComplete((ignored, e) -> finish(Attempt.NOT_ACQUIRED, null));
                } else if (runtime.gateway().replicaSync()) {
                    awaitReplicas(before, epoch, attempt);
                } else {
                    held(before + 1);
                    finish(attempt, null);
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
            UnlockChannels.Waiter waiter = subscribed.park(() -> attempt(before), untilExpiry);
            parked = waiter;
            if (cancelled) {
                waiter.fire();
            }
        }

        /**
         * Keeps the acquire only once enough replicas have it: a failover to a replica without
         * it would hand the lock to someone else while this owner believes it holds it.
         */
        private void awaitReplicas(int before, long epoch, Attempt attempt) {
            RedisGateway gateway = runtime.gateway();
            gateway.waitForReplicas(keys.key()).whenComplete((acks, error) -> {
                int required = gateway.replicaSyncMinReplicas();
                boolean reconnected = gateway.connectionEpoch() != epoch;
                if ((reconnected || (error != null && RedisGateway.transientFailure(Exceptions.unwrap(error))))
                        && !cancelled && retryBudget().deadlineNanos() - runtime.nanoTime() > 0) {
                    // WAIT counts the writes of the connection it runs on: after a reconnect the
                    // acquire is run again as a repeat (it only refreshes the lease, a write on
                    // the new connection) and WAIT asked again.
                    attempt(before, true);
                    return;
                }
                RuntimeException failure;
                if (error != null) {
                    failure = Exceptions.translate(describe("wait for replicas of"), error);
                } else if (reconnected) {
                    failure = new RelockConnectionException("Redis connection was re-established while waiting "
                            + "for replicas: " + describe("acquire") + "; the acquire was undone", null);
                } else if (acks >= required) {
                    held(before + 1);
                    finish(attempt, null);
                    return;
                } else {
                    failure = new RelockReplicaSyncException("acquired lock '" + getName() + "' on the master but only "
                            + acks + " of the required " + required + " replicas acknowledged within "
                            + gateway.replicaSyncTimeoutMillis() + " ms; the acquire was released", acks.intValue(),
                            required);
                }
                // Undone before the caller hears of it, so nothing stays held that it does not know of.
                rollback(owner, before, failure).whenComplete((ignored, rollbackError) -> finish(null, failure));
            });
        }

        private void held(int count) {
            holdsAfter = count;
            runtime.watchdog().acquired(LockEngine.this, owner, field, leaseMillis, count, ownerThreadName);
        }

        /** Waits without pub/sub: a timer starts the next attempt (the spin lock's way). */
        private void pause(int before, long millis) {
            UnlockChannels.Waiter waiter = UnlockChannels.timed(runtime.timer(), () -> attempt(before), millis);
            parked = waiter;
            if (cancelled) {
                waiter.fire();
            }
        }

        private void subscribeThenRetry(int before, long untilExpiry) {
            runtime.channels().subscribe(driver.channelFor(keys, field)).whenComplete((subscribed, error) -> {
                if (error != null) {
                    // Only the pub/sub connection is in trouble (e.g. a proxy or an output buffer
                    // limit dropped it): wait by polling until it is back, within the wait.
                    LOG.debug("cannot subscribe to the unlock channel of lock '{}' ({}); polling", getName(),
                            Exceptions.unwrap(error).toString());
                    pause(before, Math.min(untilExpiry, RedisGateway.MAX_RETRY_PAUSE_MILLIS));
                    return;
                }
                subscribedEpoch = runtime.gateway().connectionEpoch();
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
            finish(null, failure);
        }

        private void finish(Attempt outcome, RuntimeException error) {
            if (!finished.compareAndSet(false, true)) {
                return;
            }
            RuntimeException failure = error != null ? error : abortCause;
            releaseSubscription();
            runtime.unregister(this);
            if (outcome == null || !outcome.acquired()) {
                driver.abandon(field).whenComplete((ignored, abandonError) -> {
                    if (abandonError != null) {
                        // A fair lock's queue then keeps this waiter until threadWaitTime drops it.
                        LOG.debug("could not leave the waiters of lock '{}' ({})", getName(),
                                Exceptions.unwrap(abandonError).toString());
                    }
                    complete(outcome, failure);
                });
            } else {
                complete(outcome, failure);
            }
        }

        private void complete(Attempt outcome, RuntimeException failure) {
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
            runtime.observers().acquireEnded(new AcquireEvent(getName(), type(), owner, how,
                    runtime.nanoTime() - startNanos, how == AcquireEvent.Outcome.ACQUIRED ? holdsAfter : 0, failure),
                    observed);
        }

        private void releaseSubscription() {
            UnlockChannels.Channel subscribed = subscription.getAndSet(null);
            if (subscribed != null) {
                runtime.channels().release(subscribed);
            }
        }
    }
}
