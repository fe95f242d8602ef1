package io.relock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * A lock on Redis shared by every process that uses the same name, with the method names of
 * Redisson's {@code RLock} so that migrating code only changes imports and the factory.
 *
 * <h2>Ownership and reentrancy</h2>
 * A lock is owned by a thread of one {@link Relock} client: the owner is the client's
 * {@link Relock#clientId() id} plus {@link Thread#getId() the thread's id} (virtual threads
 * included). The owner may acquire it again; each acquire must be matched by one
 * {@link #unlock()}. Another thread, or another client, cannot unlock it (except with
 * {@link #forceUnlock()}).
 *
 * <h2>Leases and the watchdog</h2>
 * Every hold has a lease after which Redis drops it, so a crashed holder never blocks others
 * for longer than its lease. Methods without a {@code leaseTime}, or with a {@code leaseTime} of
 * {@code -1}, take {@link RelockConfig#watchdogTimeout()} as the lease and the client's watchdog
 * renews it every third of that while the lock is held, until the last {@code unlock()}. With
 * an explicit lease there is no renewal: the lock is released when the lease ends, held or not.
 * If a hold is lost (it expired, was force-unlocked, or renewal failed until the lease ran out),
 * {@link LockListener}s are told and the owner's next {@code unlock()} throws
 * {@link IllegalMonitorStateException} saying so.
 *
 * <p>A reentrant lock handed over by a release (see {@link #unlock()}) may be held before Redis
 * confirmed it: when a thread of the same client released it to the caller, or another client's
 * release did and the hand-over lease surely had a second left. The owner's later calls about
 * the hold (its unlock, its renewals) wait for that write first; if it failed after all, the hold
 * is reported lost as above.
 *
 * <h2>Arguments</h2>
 * A {@code waitTime} of zero or less means one attempt without waiting; a very large one means
 * "wait" (it never overflows). A {@code leaseTime} of {@code -1} means "no lease, the watchdog
 * renews"; any other {@code leaseTime} of zero or less, under one millisecond, or too large for
 * Redis is an {@link IllegalArgumentException}. A {@code null} unit is a
 * {@link NullPointerException}. Bad arguments are rejected before anything is sent to Redis.
 *
 * <h2>Failures</h2>
 * A call whose connection breaks, or whose reply is lost, is retried, and takes effect at most
 * once however often it runs: an acquire takes one hold, a release releases one.
 *
 * <p><b>Calls with a wait ride through a reconnect.</b> {@code lock()}, {@code lock(lease)},
 * {@code lockInterruptibly}, {@code tryLock(waitTime, ...)} and the async acquires with a wait
 * treat Redis being unreachable as they treat a holder: they keep trying (every 10 ms at first,
 * backing off to every 200 ms) while the client reconnects (a server restarting, a network
 * blip, a failover), and acquire once Redis is back, within their wait. {@code lock()} waits
 * until Redis is back, as it waits for a holder (not interruptible: an interrupt is remembered);
 * {@code lockInterruptibly} stops at an interrupt; {@code tryLock(waitTime, ...)} throws
 * {@link RelockConnectionException} (the client's error as its cause) once its wait is over,
 * never {@code false}. Calls without a wait ({@code tryLock()}, {@code unlock}, {@code forceUnlock},
 * {@code isLocked}, {@link Relock#getLockInfo}) retry for at most
 * {@link RelockConfig#commandTimeout()}, and on a single server that refuses connections throw
 * {@link RelockConnectionException} at once; in Sentinel and Cluster they reach the promoted
 * master within that time. When Redis did not answer in time they throw
 * {@link RelockTimeoutException} (a {@code tryLock} never answers {@code false} for either).
 * An acquire whose outcome is still unknown then is undone with an owner-checked release
 * before the exception reaches the caller, so nothing stays locked that the caller does not
 * know about; if Redis stays unreachable for that undo too, the hold is never renewed and ends
 * with its lease.
 *
 * <h2>One-call forms</h2>
 * {@link #withLock(Runnable)}, {@link #tryWithLock(long, TimeUnit, Runnable)} and their
 * value-returning variants acquire, run an action and release in a {@code finally}, exactly as
 * written out by hand; {@link #hold()} and {@link #tryHold(long, TimeUnit)} return a
 * {@link LockHold} for try-with-resources, which suits actions that throw checked exceptions:
 *
 * <pre>{@code
 * lock.withLock(() -> ledger.post(entry));
 * try (LockHold hold = lock.hold()) {
 *     Files.writeString(path, text);
 * }
 * }</pre>
 *
 * <h2>Async owners</h2>
 * The async forms take the owner as an argument. Pass an id from {@link Relock#newOwnerId()}:
 * those ids are negative and so never a thread's id. Any {@code long} is accepted (Redisson's
 * reactive API passes its own ids), but a positive one is some thread's id: while the async
 * hold lasts, that thread of this client counts as its owner and may unlock it.
 *
 * <p>An async acquire can be given up: {@code stage.toCompletableFuture().cancel(false)} completes
 * the stage with a {@link java.util.concurrent.CancellationException} at once, the wait leaves
 * the queue (a multi-lock or RedLock at the end of its current round of attempts), and a hold
 * that was won in a race with the cancel is released again by the client, so a cancelled
 * acquire leaves nothing held. A stage that completed before the cancel is not affected: its
 * owner holds the lock. Stages derived with {@code thenApply} and the like do not pass a
 * cancel upstream; cancel the stage the lock returned.
 *
 * <p>Instances are cheap and thread-safe; the owner is always the calling thread (or the
 * explicit {@code ownerId} of the async forms).
 */
public interface DistributedLock extends Lock {

    /**
     * The lock's name, as passed to {@link Relock#getLock(String)}.
     *
     * @return the name
     */
    String getName();

    /**
     * Acquires the lock, waiting as long as it takes, with the watchdog renewing the lease.
     * Not interruptible: an interrupt while waiting is remembered and the thread's interrupt
     * flag is set again when this returns. Rides through Redis being unreachable (a restart, a
     * reconnect, a failover): it keeps trying until Redis is back, as it waits for a holder.
     *
     * @throws RelockException if Redis fails other than by being unreachable (it rejects the
     *     command), or the client is closed meanwhile ({@link IllegalStateException})
     */
    @Override
    void lock();

    /**
     * Acquires the lock, waiting as long as it takes, with a fixed lease and no renewal.
     * Not interruptible, and riding through Redis being unreachable, as {@link #lock()}.
     *
     * @param leaseTime how long the hold lasts unless released before; {@code -1} for the watchdog
     * @param unit the unit of {@code leaseTime}
     * @throws IllegalArgumentException if {@code leaseTime} is invalid (see the class comment)
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockException if Redis fails
     */
    void lock(long leaseTime, TimeUnit unit);

    /**
     * Acquires the lock with the watchdog, waiting until it is free or the thread is interrupted.
     * Rides through Redis being unreachable, as {@link #lock()}, until the interrupt.
     *
     * @throws InterruptedException if the thread is interrupted before or while waiting (also
     *     while Redis is unreachable); the lock is then not held and the wait's subscription has
     *     been released
     * @throws RelockException if Redis fails other than by being unreachable
     */
    @Override
    void lockInterruptibly() throws InterruptedException;

    /**
     * As {@link #lockInterruptibly()} with a fixed lease (riding through Redis being
     * unreachable until an interrupt).
     *
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of {@code leaseTime}
     * @throws InterruptedException if interrupted before or while waiting
     * @throws IllegalArgumentException if {@code leaseTime} is invalid
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockException if Redis fails
     */
    void lockInterruptibly(long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock if it is free (or already held by this thread) at this moment, with
     * the watchdog. One round trip; never waits, not even for a reconnect.
     *
     * @return {@code true} if acquired, {@code false} if another owner holds it
     * @throws RelockConnectionException at once if a single server refuses connections; after at
     *     most {@link RelockConfig#commandTimeout()} of retries if the connection is down otherwise
     * @throws RelockException if Redis fails otherwise (never {@code false} for that)
     */
    @Override
    boolean tryLock();

    /**
     * Acquires the lock with the watchdog if it becomes free within {@code waitTime}. Rides
     * through Redis being unreachable within the wait: acquires if Redis is back in time.
     *
     * @param waitTime how long to wait; zero or less for a single attempt (as {@link #tryLock()})
     * @param unit the unit of {@code waitTime}
     * @return {@code true} if acquired, {@code false} if the wait ran out while another owner held it
     * @throws InterruptedException if interrupted before or while waiting
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockConnectionException if Redis was still unreachable when the wait ran out
     *     (never {@code false} for that); the cause is the client's error
     * @throws RelockException if Redis fails otherwise
     */
    @Override
    boolean tryLock(long waitTime, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock with the given lease if it becomes free within {@code waitTime}; rides
     * through Redis being unreachable within the wait, as {@link #tryLock(long, TimeUnit)}.
     *
     * @param waitTime how long to wait; zero or less for a single attempt
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of both times
     * @return {@code true} if acquired, {@code false} if the wait ran out while another owner held it
     * @throws InterruptedException if interrupted before or while waiting
     * @throws IllegalArgumentException if {@code leaseTime} is invalid
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockConnectionException if Redis was still unreachable when the wait ran out
     * @throws RelockException if Redis fails otherwise
     */
    boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * Releases one hold of the calling thread; the lock is free when the hold count reaches
     * zero, and waiters (in any Relock or Redisson client) are woken. A reentrant lock
     * ({@code getLock}) is instead handed on when the last hold goes: to a thread of this client
     * that waits for it (in one script call; the lock is never free in between), or else to the
     * Relock waiter of another client first in the queue on Redis, which alone is woken and
     * claims it; Redisson's waiters are woken once no Relock waiter is queued. This call returns
     * once Redis answered, whichever way the lock went.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock; the
     *     message names the lock, and says so when the hold was lost (lease ran out, renewal
     *     failed, force-unlocked)
     * @throws RelockException if Redis fails (without waiting for a reconnect: a
     *     {@link RelockConnectionException} at once when a single server refuses connections);
     *     the hold is then unchanged as far as Relock knows
     */
    @Override
    void unlock();

    /**
     * Releases one hold of the calling thread, but keeps the lock's last hold until it has lasted
     * at least {@code holdAtLeast}: a release with a minimum hold, for a job that must run at most
     * once per period on any node (ShedLock's {@code lockAtLeastFor}). An overload of
     * {@code unlock} because in every case it ends the caller's hold, at once or when the
     * minimum is over; the parameter is named as {@code @WithLock(holdAtLeast)}.
     * <ul>
     * <li>When this is the owner's last hold and less than {@code holdAtLeast} has passed since it
     * was acquired (by this client's clock, from when the acquire was answered), the lock stays
     * held on Redis for the rest of that time: its lease is set to what is left (only if this owner
     * still holds it) and waiters are woken to look at the new expiry. The client forgets the
     * hold: the watchdog no longer renews it, it is not handed to a waiter, and
     * {@link Relock#heldLocks()} no longer lists it. Every other owner, in this client or another,
     * finds the lock held until the lease ends and gets it no earlier. With a fixed
     * {@code leaseTime}, the lock is never kept past that lease ({@code lockAtMostFor}).</li>
     * <li>Otherwise (the time has passed, {@code holdAtLeast} is zero, or a re-entrant owner holds
     * it more than once) exactly as {@link #unlock()}.</li>
     * </ul>
     * While the lock is kept, {@link #isHeldByCurrentThread()} still answers {@code true} (it asks
     * Redis, where this owner holds it until the lease ends), and a later {@link #unlock()} by the
     * same owner releases it at once: the way to cut the minimum short.
     * <p>Implemented by the reentrant, fair, fenced, spin and simple locks and the write half of a
     * read-write lock; the read half and multi-locks ({@code getMultiLock}, {@code getRedLock})
     * throw {@link UnsupportedOperationException}: a read hold shares the lease with other
     * readers, and a multi-lock's members would each keep their own.
     * @param holdAtLeast the minimum time the lock is held, counted from the acquire
     * @throws NullPointerException if {@code holdAtLeast} is null
     * @throws IllegalArgumentException if {@code holdAtLeast} is negative
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock, as
     *     {@link #unlock()}
     * @throws UnsupportedOperationException if this kind of lock cannot be kept (see above)
     * @throws RelockException if Redis fails; the hold is then no longer renewed and ends with
     *     its lease (it is never released earlier than asked), and {@link #unlock()} may still
     *     release it
     */
    default void unlock(Duration holdAtLeast) {
        checkHoldAtLeast(holdAtLeast);
        throw new UnsupportedOperationException("lock '" + getName() + "' cannot be released with a minimum hold");
    }

    /**
     * Releases the lock whoever holds it, however often it was entered, and wakes waiters.
     * The previous holders are told through {@link LockListener} when their watchdog notices
     * (the cause a {@link LockForceUnlockedException}). Removes only a lock of this lock's type:
     * the script that deletes the key first checks that it holds one (see
     * {@link LockInfo.Kind}); a key holding another type's lock, or data that no lock writes,
     * is left untouched.
     *
     * @return {@code true} if the lock was held and is now released; {@code false} if it was
     *     free, or the key holds another lock type or data that no lock writes
     * @throws RelockException if Redis fails
     */
    boolean forceUnlock();

    /**
     * Whether any owner holds the lock now.
     *
     * @return {@code true} if held
     * @throws RelockException if Redis fails
     */
    boolean isLocked();

    /**
     * Whether the calling thread holds the lock now, according to Redis.
     *
     * @return {@code true} if held by the calling thread
     * @throws RelockException if Redis fails
     */
    boolean isHeldByCurrentThread();

    /**
     * Whether the given thread of this client holds the lock now, according to Redis.
     *
     * @param threadId a thread id, or an async owner id (see {@link Relock#newOwnerId()})
     * @return {@code true} if held by that owner
     * @throws RelockException if Redis fails
     */
    boolean isHeldByThread(long threadId);

    /**
     * How many times the calling thread holds the lock (0 if it does not).
     *
     * @return the hold count
     * @throws RelockException if Redis fails
     */
    int getHoldCount();

    /**
     * The remaining lease in milliseconds: {@code -2} if the lock is free, {@code -1} if it is
     * held without expiry (only possible when written by other tools).
     *
     * @return the time to live in milliseconds
     * @throws RelockException if Redis fails
     */
    long remainTimeToLive();

    // ---- one-call forms ------------------------------------------------------------------------

    /**
     * Acquires the lock as {@link #lock()} does, runs {@code action}, and releases the lock
     * with {@link #unlock()} in a {@code finally}. Neither the wait nor the action is
     * interruptible by this method; an interrupt leaves the thread's interrupt flag set.
     *
     * @param action what to run while holding the lock
     * @throws NullPointerException if {@code action} is null (nothing is acquired)
     * @throws RelockException if Redis fails while acquiring (the action is not run) or while
     *     releasing after the action completed normally
     * @throws IllegalMonitorStateException if the hold was lost (lease ran out, renewal failed,
     *     force-unlocked) by the time the action returned
     * @throws RuntimeException what {@code action} threw (an {@link Error} passes the same
     *     way), after the release; a failure of that release is
     *     {@linkplain Throwable#getSuppressed() suppressed} in it
     */
    default void withLock(Runnable action) {
        Objects.requireNonNull(action, "action must not be null");
        lock();
        runHolding(action);
    }

    /**
     * Acquires the lock as {@link #lock()} does, computes a value, and releases the lock with
     * {@link #unlock()} in a {@code finally}. For actions that throw checked exceptions, use
     * {@link #hold()}. Failures and interrupts as {@link #withLock(Runnable)}; a failed release
     * after a successful action throws and the value is lost.
     *
     * @param <T> the type of the value
     * @param action what to compute while holding the lock
     * @return what {@code action} returned, possibly null
     * @throws NullPointerException if {@code action} is null (nothing is acquired)
     * @throws RelockException if Redis fails while acquiring or releasing
     * @throws IllegalMonitorStateException if the hold was lost by the time the action returned
     * @throws RuntimeException what {@code action} threw, as {@link #withLock(Runnable)}
     */
    default <T> T withLock(Supplier<? extends T> action) {
        Objects.requireNonNull(action, "action must not be null");
        lock();
        return callHolding(action);
    }

    /**
     * Runs {@code action} holding the lock if it is free at this moment ({@link #tryLock()}),
     * releasing it with {@link #unlock()} in a {@code finally}; does nothing otherwise.
     *
     * @param action what to run while holding the lock
     * @return {@code true} if the lock was acquired and the action ran, {@code false} if
     *     another owner held it
     * @throws NullPointerException if {@code action} is null
     * @throws RelockException if Redis fails (never {@code false} for that)
     * @throws IllegalMonitorStateException if the hold was lost by the time the action returned
     */
    default boolean tryWithLock(Runnable action) {
        Objects.requireNonNull(action, "action must not be null");
        if (!tryLock()) {
            return false;
        }
        runHolding(action);
        return true;
    }

    /**
     * Runs {@code action} holding the lock if it becomes free within {@code waitTime}
     * ({@link #tryLock(long, TimeUnit)}), releasing it with {@link #unlock()} in a
     * {@code finally}; does nothing otherwise. Once the action runs, an interrupt no longer
     * stops anything: it leaves the interrupt flag set.
     *
     * @param waitTime how long to wait; zero or less for a single attempt
     * @param unit the unit of {@code waitTime}
     * @param action what to run while holding the lock
     * @return {@code true} if the lock was acquired and the action ran, {@code false} if the
     *     wait ran out
     * @throws InterruptedException if interrupted before or while waiting; nothing is then held
     *     and the action did not run
     * @throws NullPointerException if {@code unit} or {@code action} is null
     * @throws RelockException if Redis fails (never {@code false} for that)
     * @throws IllegalMonitorStateException if the hold was lost by the time the action returned
     */
    default boolean tryWithLock(long waitTime, TimeUnit unit, Runnable action) throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        Objects.requireNonNull(action, "action must not be null");
        if (!tryLock(waitTime, unit)) {
            return false;
        }
        runHolding(action);
        return true;
    }

    /**
     * Computes a value holding the lock if it is free at this moment ({@link #tryLock()}),
     * releasing it in a {@code finally}. A separate name from {@link #tryWithLock(Runnable)} so
     * that a lambda never picks the other form by surprise.
     *
     * @param <T> the type of the value
     * @param action what to compute while holding the lock
     * @return the value, or empty if another owner held the lock; also empty if the action
     *     returned null (as {@link Optional#map} treats null)
     * @throws NullPointerException if {@code action} is null
     * @throws RelockException if Redis fails (never empty for that)
     * @throws IllegalMonitorStateException if the hold was lost by the time the action returned
     */
    default <T> Optional<T> tryGetWithLock(Supplier<? extends T> action) {
        Objects.requireNonNull(action, "action must not be null");
        if (!tryLock()) {
            return Optional.empty();
        }
        return Optional.ofNullable(callHolding(action));
    }

    /**
     * Computes a value holding the lock if it becomes free within {@code waitTime}
     * ({@link #tryLock(long, TimeUnit)}), releasing it in a {@code finally}.
     *
     * @param <T> the type of the value
     * @param waitTime how long to wait; zero or less for a single attempt
     * @param unit the unit of {@code waitTime}
     * @param action what to compute while holding the lock
     * @return the value, or empty if the wait ran out; also empty if the action returned null
     * @throws InterruptedException if interrupted before or while waiting; nothing is then held
     *     and the action did not run
     * @throws NullPointerException if {@code unit} or {@code action} is null
     * @throws RelockException if Redis fails (never empty for that)
     * @throws IllegalMonitorStateException if the hold was lost by the time the action returned
     */
    default <T> Optional<T> tryGetWithLock(long waitTime, TimeUnit unit, Supplier<? extends T> action)
            throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        Objects.requireNonNull(action, "action must not be null");
        if (!tryLock(waitTime, unit)) {
            return Optional.empty();
        }
        return Optional.ofNullable(callHolding(action));
    }

    /**
     * Acquires the lock as {@link #lock()} does and returns the hold, to be released by
     * try-with-resources:
     *
     * <pre>{@code
     * try (LockHold hold = lock.hold()) {
     *     // critical section
     * }
     * }</pre>
     *
     * @return the hold, which {@link LockHold#close()} releases once
     * @throws RelockException if Redis fails while acquiring
     */
    default LockHold hold() {
        lock();
        return new LockHold(this);
    }

    /**
     * Acquires the lock if it is free at this moment ({@link #tryLock()}) and returns the hold,
     * or null. A null resource is allowed in try-with-resources (it is not closed):
     *
     * <pre>{@code
     * try (LockHold hold = lock.tryHold()) {
     *     if (hold == null) {
     *         return; // another owner has it
     *     }
     *     // critical section
     * }
     * }</pre>
     *
     * @return the hold, or null if another owner holds the lock
     * @throws RelockException if Redis fails (never null for that)
     */
    default LockHold tryHold() {
        return tryLock() ? new LockHold(this) : null;
    }

    /**
     * Acquires the lock if it becomes free within {@code waitTime}
     * ({@link #tryLock(long, TimeUnit)}) and returns the hold, or null; see {@link #tryHold()}.
     *
     * @param waitTime how long to wait; zero or less for a single attempt
     * @param unit the unit of {@code waitTime}
     * @return the hold, or null if the wait ran out
     * @throws InterruptedException if interrupted before or while waiting; nothing is then held
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockException if Redis fails (never null for that)
     */
    default LockHold tryHold(long waitTime, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        return tryLock(waitTime, unit) ? new LockHold(this) : null;
    }

    private void runHolding(Runnable action) {
        callHolding(() -> {
            action.run();
            return null;
        });
    }

    /** Runs {@code action}, which the caller has acquired this lock for, and releases it. */
    private <T> T callHolding(Supplier<? extends T> action) {
        T result;
        try {
            result = action.get();
        } catch (Throwable failure) {
            try {
                unlock();
            } catch (Throwable unlockFailure) {
                if (unlockFailure != failure) {
                    failure.addSuppressed(unlockFailure);
                }
            }
            throw failure;
        }
        unlock();
        return result;
    }

    // ---- async forms --------------------------------------------------------------------------

    /**
     * Acquires for the given owner, waiting as long as it takes, with the watchdog; rides
     * through Redis being unreachable until it is back, or the stage is cancelled.
     *
     * @param ownerId the owner: preferably an id from {@link Relock#newOwnerId()}, used
     *     consistently by one flow; a positive id makes the thread with that id of this client
     *     an owner too (see the class comment)
     * @return completes when acquired; completes exceptionally with {@link RelockException}
     */
    CompletionStage<Void> lockAsync(long ownerId);

    /**
     * Acquires for the given owner with a fixed lease, waiting as long as it takes (riding
     * through Redis being unreachable, as {@link #lockAsync(long)}).
     *
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of {@code leaseTime}
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return completes when acquired; completes exceptionally with {@link RelockException}
     * @throws IllegalArgumentException if {@code leaseTime} is invalid (thrown, not in the stage)
     * @throws NullPointerException if {@code unit} is null
     */
    CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerId);

    /**
     * One attempt for the given owner, with the watchdog.
     *
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return {@code true} if acquired; completes exceptionally with {@link RelockException}
     */
    CompletionStage<Boolean> tryLockAsync(long ownerId);

    /**
     * Acquires for the given owner if the lock becomes free within {@code waitTime}; rides
     * through Redis being unreachable within the wait, and completes exceptionally with
     * {@link RelockConnectionException} if it still is when the wait runs out.
     *
     * @param waitTime how long to wait; zero or less for a single attempt
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of both times
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return {@code true} if acquired, {@code false} if the wait ran out; completes
     *     exceptionally with {@link RelockException}
     * @throws IllegalArgumentException if {@code leaseTime} is invalid
     * @throws NullPointerException if {@code unit} is null
     */
    CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerId);

    /**
     * Releases one hold of the given owner.
     *
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return completes when released; completes exceptionally with
     *     {@link IllegalMonitorStateException} if that owner does not hold the lock, or with
     *     {@link RelockException} if Redis fails
     */
    CompletionStage<Void> unlockAsync(long ownerId);

    /**
     * Releases one hold of the given owner with a minimum hold, as {@link #unlock(Duration)}.
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @param holdAtLeast the minimum time the lock is held, counted from the acquire
     * @return completes when released or kept; completes exceptionally with
     *     {@link IllegalMonitorStateException} if that owner does not hold the lock, or with
     *     {@link RelockException} if Redis fails
     * @throws NullPointerException if {@code holdAtLeast} is null (thrown, not in the stage)
     * @throws IllegalArgumentException if {@code holdAtLeast} is negative
     * @throws UnsupportedOperationException if this kind of lock cannot be kept (see
     *     {@link #unlock(Duration)})
     */
    default CompletionStage<Void> unlockAsync(long ownerId, Duration holdAtLeast) {
        checkHoldAtLeast(holdAtLeast);
        throw new UnsupportedOperationException("lock '" + getName() + "' cannot be released with a minimum hold");
    }

    /**
     * Calls {@code listener} when a hold of this lock by {@code ownerId} is lost, until
     * the returned registration is closed: the same events as a {@link LockListener}
     * registered with {@link Relock#addLockListener(LockListener)}, narrowed to this lock and
     * this owner. For a multi-lock, a lost member is a lost hold; for a RedLock, losing so many
     * members that no majority is left. Made for code that ties a hold to a piece of work (a
     * pipeline, a coroutine) and must stop that work when the hold goes. Only holds the
     * watchdog renews can be lost this way (see {@link LockListener}).
     *
     * <p>The listener runs on one of the client's worker threads, never on an I/O thread; an
     * exception it throws is logged. Register before acquiring or while holding: a loss that
     * happened before the registration is not reported.
     *
     * @param ownerId the owner: a thread id or an id from {@link Relock#newOwnerId()}
     * @param listener what to call
     * @return the registration; close it when the hold ends
     * @throws NullPointerException if {@code listener} is null
     * @throws IllegalStateException if the client is closed
     * @throws UnsupportedOperationException if this lock cannot report lost holds (every lock
     *     of {@link Relock} can)
     */
    default ListenerRegistration addLostListener(long ownerId, LockListener listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        throw new UnsupportedOperationException("lock '" + getName() + "' cannot report lost holds");
    }

    private static void checkHoldAtLeast(Duration holdAtLeast) {
        Objects.requireNonNull(holdAtLeast, "holdAtLeast must not be null");
        if (holdAtLeast.isNegative()) {
            throw new IllegalArgumentException("holdAtLeast must not be negative: " + holdAtLeast);
        }
    }

    /**
     * Not supported: a distributed lock has no condition variables.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    Condition newCondition();
}
