package io.relock;

import java.util.Objects;

/**
 * The end of one acquire, for {@link LockObserver#onAcquireEnd}.
 *
 * @param lockName the lock's name
 * @param lockType the lock's type ({@link HeldLock#type()} lists them)
 * @param ownerId the thread id or async owner id that asked
 * @param outcome how the acquire ended
 * @param waitNanos from the call to its end, in nanoseconds
 * @param holdCount the owner's hold count after the acquire: 1 for a first acquire, more for a
 *     re-entry, 0 when not acquired
 * @param error why it failed, for {@link Outcome#ERROR}; otherwise {@code null}
 */
public record AcquireEvent(String lockName, String lockType, long ownerId, Outcome outcome, long waitNanos,
        int holdCount, Throwable error) {

    /** How an acquire ended. */
    public enum Outcome {
        /** The lock is held (a first acquire or a re-entry). */
        ACQUIRED,
        /** Not acquired: another owner held it until the wait ran out (or {@code tryLock()} found it held). */
        TIMEOUT,
        /** Not acquired: the caller was interrupted while it waited. */
        INTERRUPTED,
        /** Not acquired: Redis failed, the client closed, or the call was refused. */
        ERROR
    }

    /**
     * Creates an event.
     *
     * @param lockName the lock's name
     * @param lockType the lock's type
     * @param ownerId the owner that asked
     * @param outcome how it ended
     * @param waitNanos how long it took, in nanoseconds
     * @param holdCount the owner's hold count after it
     * @param error why it failed, or {@code null}
     * @throws NullPointerException if {@code lockName}, {@code lockType} or {@code outcome} is null
     */
    public AcquireEvent {
        Objects.requireNonNull(lockName, "lockName must not be null");
        Objects.requireNonNull(lockType, "lockType must not be null");
        Objects.requireNonNull(outcome, "outcome must not be null");
    }
}
