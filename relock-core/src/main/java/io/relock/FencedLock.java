package io.relock;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A {@link DistributedLock} that hands each new holder a fencing token: a number that grows
 * strictly every time the lock passes to another holder (re-entry keeps the holder's token).
 *
 * <p>A lock alone cannot stop a holder that was paused past its lease (a long GC, a frozen VM)
 * from acting after someone else took over. Pass the token along with every write to the
 * protected resource and have the resource reject a token lower than the highest it has seen:
 * the late writer is then refused instead of corrupting data (Kleppmann's fencing tokens).
 *
 * <p>The token lives in the key {@code {<name>}:token}, which never expires, so tokens keep
 * growing across restarts of the clients (not across a Redis data loss).
 */
public interface FencedLock extends DistributedLock {

    /**
     * As {@link #lock()}, returning the holder's token.
     *
     * @return the fencing token
     * @throws RelockException if Redis fails
     */
    long lockAndGetToken();

    /**
     * As {@link #tryLock()}, returning the token.
     *
     * @return the fencing token, or {@code null} if not acquired
     * @throws RelockException if Redis fails
     */
    Long tryLockAndGetToken();

    /**
     * As {@link #tryLock(long, TimeUnit)}, returning the token.
     *
     * @param waitTime how long to wait; zero or less for one attempt
     * @param unit the unit of {@code waitTime}
     * @return the fencing token, or {@code null} if the wait ran out
     * @throws InterruptedException if interrupted before or while waiting
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockException if Redis fails
     */
    Long tryLockAndGetToken(long waitTime, TimeUnit unit) throws InterruptedException;

    /**
     * As {@link #tryLock(long, long, TimeUnit)}, returning the token.
     *
     * @param waitTime how long to wait; zero or less for one attempt
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of both times
     * @return the fencing token, or {@code null} if the wait ran out
     * @throws InterruptedException if interrupted before or while waiting
     * @throws IllegalArgumentException if {@code leaseTime} is invalid
     * @throws NullPointerException if {@code unit} is null
     * @throws RelockException if Redis fails
     */
    Long tryLockAndGetToken(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * The current holder's token, whoever holds the lock.
     *
     * @return the token, or {@code null} if the lock is free
     * @throws RelockException if Redis fails
     */
    Long getToken();

    /**
     * As {@link #lockAsync(long, TimeUnit, long)}, completing with the holder's token: for
     * owners that are not threads (a pipeline, a coroutine). Cancelling the stage gives the wait
     * up as described in {@link DistributedLock}.
     *
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of {@code leaseTime}
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return completes with the fencing token when acquired; completes exceptionally with
     *     {@link RelockException} if Redis fails
     * @throws IllegalArgumentException if {@code leaseTime} is invalid (thrown, not in the stage)
     * @throws NullPointerException if {@code unit} is null
     */
    CompletionStage<Long> lockAndGetTokenAsync(long leaseTime, TimeUnit unit, long ownerId);

    /**
     * As {@link #tryLockAsync(long, long, TimeUnit, long)}, completing with the token.
     *
     * @param waitTime how long to wait; zero or less for one attempt
     * @param leaseTime how long the hold lasts; {@code -1} for the watchdog
     * @param unit the unit of both times
     * @param ownerId the owner, preferably from {@link Relock#newOwnerId()}
     * @return completes with the fencing token, or {@code null} if the wait ran out; completes
     *     exceptionally with {@link RelockException} if Redis fails
     * @throws IllegalArgumentException if {@code leaseTime} is invalid (thrown, not in the stage)
     * @throws NullPointerException if {@code unit} is null
     */
    CompletionStage<Long> tryLockAndGetTokenAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerId);
}
