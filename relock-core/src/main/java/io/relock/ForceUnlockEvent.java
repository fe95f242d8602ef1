package io.relock;

import java.util.Objects;

/**
 * {@code forceUnlock()} was called through this client, for {@link LockObserver#onForceUnlock}.
 *
 * @param lockName the lock's name
 * @param lockType the lock's type ({@link HeldLock#type()} lists them)
 * @param removed whether there was a lock to remove
 */
public record ForceUnlockEvent(String lockName, String lockType, boolean removed) {

    /**
     * Creates an event.
     *
     * @param lockName the lock's name
     * @param lockType the lock's type
     * @param removed whether there was a lock to remove
     * @throws NullPointerException if {@code lockName} or {@code lockType} is null
     */
    public ForceUnlockEvent {
        Objects.requireNonNull(lockName, "lockName must not be null");
        Objects.requireNonNull(lockType, "lockType must not be null");
    }
}
