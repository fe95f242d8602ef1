package io.relock;

import java.util.Objects;

/**
 * A lock this client held was lost; see {@link LockListener}.
 *
 * @param lockName the lock's name as passed to {@code getLock}
 * @param ownerThreadId the thread id (or async owner id) that held it
 * @param cause why renewal failed, or {@code null} when renewal found the lock simply gone
 */
public record LockLostEvent(String lockName, long ownerThreadId, Throwable cause) {

    /**
     * Creates an event.
     *
     * @param lockName the lock's name as passed to {@code getLock}
     * @param ownerThreadId the thread id (or async owner id) that held it
     * @param cause why renewal failed, or {@code null} when renewal found the lock simply gone
     * @throws NullPointerException if {@code lockName} is null
     */
    public LockLostEvent {
        Objects.requireNonNull(lockName, "lockName must not be null");
    }
}
