package io.relock.internal.engine;

import io.relock.DistributedLock;
import io.relock.ForceUnlockEvent;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.Renewal;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
import io.relock.internal.support.Observers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one lock engine: argument checks, the wait loop (attempt, then wait as the
 * {@link WaitPolicy} says, attempt again), interrupt and timeout handling, undoing acquires
 * whose reply was lost, replica sync, release bookkeeping, the watchdog's records and the
 * observer events; who gets the lock next within this client is its {@link Turn}'s. A lock type is a {@link LockDriver} (its scripts) and a wait policy; the
 * engine is the same for all of them.
 *
 * <p>Follow {@code lock()}: {@link #start} makes an {@link Acquisition}, which calls
 * {@link LockDriver#acquire} until it holds the lock, the wait ends or the caller gives up, and
 * parks between attempts. Follow {@code unlock()}: {@link #release} makes a {@link Release}, which calls
 * {@link LockDriver#release} with the hold count the watchdog keeps, confirms the write as
 * acquires and renewals are confirmed ({@link io.relock.internal.backend.WriteGateway#confirmWrite}), and forgets the hold
 * when the last one is gone.
 */
public final class LockEngine extends AcquirableLock implements DistributedLock, EngineBacked {

    private static final Logger LOG = LoggerFactory.getLogger(LockEngine.class);

    /** The client it runs in; the multi-locks over engines read it too. */
    public final LockClient client;
    private final LockKeys keys;
    private final LockDriver driver;
    private final WaitPolicy wait;

    public LockEngine(LockClient client, LockKeys keys, LockDriver driver, WaitPolicy wait) {
        this.client = client;
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
    @Override
    public String key() {
        return keys.key();
    }

    /** This lock type's name, as {@link io.relock.HeldLock#type()} and the observer events give it. */
    @Override
    public String type() {
        return driver.type();
    }

    /** The script that renews this lock type's holds in the watchdog's batches. */
    @Override
    public Renewal renewal() {
        return driver.renewal();
    }

    @Override
    LockClient client() {
        return client;
    }

    @Override
    public String fieldOf(long owner) {
        return driver.fieldOf(client.field(owner));
    }

    @Override
    LockDriver driver() {
        return driver;
    }

    @Override
    LockKeys keys() {
        return keys;
    }

    @Override
    WaitPolicy waitPolicy() {
        return wait;
    }

    public void checkOpen() {
        client.checkOpen();
    }

    @Override
    public boolean forceUnlock() {
        client.checkOpen();
        boolean removed = Futures.await(driver.forceRelease(), describe("force-unlock")) == 1;
        Observers observers = client.observers();
        if (observers.any()) {
            observers.forceUnlocked(new ForceUnlockEvent(getName(), type(), removed));
        }
        return removed;
    }

    public static long currentThreadId() {
        return Thread.currentThread().getId();
    }

    @Override
    String describe(String operation) {
        return operation + " " + driver.noun() + " '" + getName() + "'";
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
        Futures.await(new Release(this, currentThreadId(), false, true).run(), describe("unlock"));
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
        client.checkOpen();
        return Futures.await(driver.holdCount(fieldOf(owner)), describe("read hold count of"));
    }

    @Override
    public boolean isLocked() {
        client.checkOpen();
        return Futures.await(driver.isLocked(), describe("check"));
    }

    @Override
    public long remainTimeToLive() {
        client.checkOpen();
        return Futures.await(client.ttl(keys.key()), describe("read TTL of"));
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed locks have no conditions: lock '" + getName()
                + "' cannot create one; use a Redis list or stream to signal between processes");
    }

    /** Acquires for the calling thread; an interrupt is remembered, not obeyed. */
    public Attempt acquireUninterruptibly(long waitNanos, long leaseMillis) {
        Futures.refuseIoThread(describe("acquire")); // before anything is sent: a refused acquire holds nothing
        Acquisition acquisition = start(currentThreadId(), waitNanos, leaseMillis, true);
        return Futures.await(acquisition.result, describe("acquire"));
    }

    /** Acquires for the calling thread; an interrupt ends the wait with nothing held. */
    public Attempt acquireInterruptibly(long waitNanos, long leaseMillis) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring lock '" + getName() + "'");
        }
        Futures.refuseIoThread(describe("acquire"));
        Acquisition acquisition = start(currentThreadId(), waitNanos, leaseMillis, true);
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
        long bound = 3 * client.commandTimeoutMillis() + 1000;
        long deadline = client.nanoTime() + TimeUnit.MILLISECONDS.toNanos(bound);
        while (true) {
            try {
                if (acquisition.result.get(Math.max(0, deadline - client.nanoTime()), TimeUnit.NANOSECONDS)
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
    public CompletionStage<Void> lockAsync(long ownerId) {
        return acquireCancellable(ownerId, Args.FOREVER_NANOS, Args.WATCHDOG_LEASE, attempt -> null);
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireCancellable(ownerId, Args.FOREVER_NANOS, lease, attempt -> null);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerId) {
        return acquireCancellable(ownerId, 0, Args.WATCHDOG_LEASE, Attempt::acquired);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return acquireCancellable(ownerId, Args.waitNanos(waitTime, unit), lease, Attempt::acquired);
    }

    /**
     * An acquire for an explicit owner whose caller may cancel it: the wait ends, and a hold
     * won in a race with the cancel is released (see {@link Futures#cancellable}).
     */
    public <T> CompletableFuture<T> acquireCancellable(long owner, long waitNanos, long leaseMillis,
            Function<Attempt, T> result) {
        Acquisition acquisition = start(owner, waitNanos, leaseMillis);
        return Futures.cancellable(acquisition.result, result, acquisition::cancel, attempt -> {
            if (attempt.acquired()) {
                release(owner).whenComplete((released, error) -> {
                    if (error != null) {
                        LOG.warn("could not release lock '{}' won by a cancelled acquire of {} ({}); it ends with"
                                + " its lease", getName(), fieldOf(owner), Exceptions.unwrap(error).toString());
                    }
                });
            }
        });
    }

    /** Acquires for an explicit owner, without blocking. */
    public CompletableFuture<Attempt> acquireAsync(long owner, long waitNanos, long leaseMillis) {
        return start(owner, waitNanos, leaseMillis).result;
    }

    @Override
    public CompletionStage<Void> unlockAsync(long ownerId) {
        return release(ownerId);
    }

    @Override
    public ListenerRegistration addLostListener(long ownerId, LockListener listener) {
        return client.addLostListener(getName(), ownerId, listener);
    }

    // ---- the engine --------------------------------------------------------------------------

    /** Starts an acquire whose caller takes the result as a stage. */
    Acquisition start(long owner, long waitNanos, long leaseMillis) {
        return start(owner, waitNanos, leaseMillis, false);
    }

    /** Starts an acquire; {@code callerBlocks} when the caller waits for the result (the synchronous API). */
    Acquisition start(long owner, long waitNanos, long leaseMillis, boolean callerBlocks) {
        client.checkOpen();
        Acquisition acquisition = new Acquisition(this, owner, waitNanos, leaseMillis, callerBlocks);
        acquisition.begin();
        return acquisition;
    }

    /**
     * Releases one hold of {@code owner} ({@link Release}); fails with IllegalMonitorStateException
     * if it holds none. The last hold is handed over to a parked waiter of this client if its
     * {@link Turn} has one, else goes through Redis: granted to another client's ticket, or free.
     */
    public CompletableFuture<Void> release(long owner) {
        return new Release(this, owner, false, false).run();
    }

    /**
     * Releases again the hold of {@code owner} whose last {@link #release} failed (its outcome
     * unknown): sent as a repeat of that call, so that if the first release took effect after
     * all, the script answers as it did instead of taking off a second hold. Must not be used
     * once another acquire or release of the owner on this lock has run since.
     */
    public CompletableFuture<Void> releaseAgain(long owner) {
        return new Release(this, owner, true, false).run();
    }

    @Override
    public void holdLost() {
        releasedThroughRedis();
    }

    /**
     * This client's hold of the lock ended through Redis, after it was forgotten, or was lost:
     * waiters of this client parked behind it must not wait for a hand-over that will not come.
     */
    void releasedThroughRedis() {
        Turn turn = client.channels().existing(keys.channel());
        if (turn != null) {
            turn.releasedThroughRedis();
        }
    }

    @Override
    CompletableFuture<Long> rollback(long owner, int countBefore, Throwable reason) {
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
}
