package io.relock;

import java.util.Objects;

/**
 * An owner's last hold of a lock ended through {@code unlock()}, for {@link LockObserver#onRelease}.
 *
 * @param lockName the lock's name
 * @param lockType the lock's type ({@link HeldLock#type()} lists them)
 * @param ownerId the thread id or async owner id that held it
 * @param holdNanos from the acquire that took the first hold to this unlock, in nanoseconds
 * @param outcome whether the unlock released the lock or found the lease lost
 */
public record ReleaseEvent(String lockName, String lockType, long ownerId, long holdNanos, Outcome outcome) {

    /** How a hold ended. */
    public enum Outcome {
        /** The unlock released the lock. */
        RELEASED,
        /** The unlock found the lock no longer held by this owner: its lease was lost before. */
        LOST
    }

    /**
     * Creates an event.
     *
     * @param lockName the lock's name
     * @param lockType the lock's type
     * @param ownerId the owner that held it
     * @param holdNanos how long it was held, in nanoseconds
     * @param outcome how it ended
     * @throws NullPointerException if {@code lockName}, {@code lockType} or {@code outcome} is null
     */
    public ReleaseEvent {
        Objects.requireNonNull(lockName, "lockName must not be null");
        Objects.requireNonNull(lockType, "lockType must not be null");
        Objects.requireNonNull(outcome, "outcome must not be null");
    }
}
