package io.relock;

import java.util.Objects;

/**
 * A lock this client held was lost; see {@link LockListener}.
 *
 * @param lockName the lock's name as passed to {@code getLock}
 * @param ownerThreadId the thread id (or async owner id) that held it
 * @param cause why the hold was lost: a {@link LockForceUnlockedException} when renewal found
 *     that a force-unlock removed it, the failure when renewal failed (for example a
 *     {@link RelockException}), or {@code null} when renewal found the lock simply gone (its
 *     lease ran out, or Redis lost it)
 */
public record LockLostEvent(String lockName, long ownerThreadId, Throwable cause) {

    /**
     * Creates an event.
     *
     * @param lockName the lock's name as passed to {@code getLock}
     * @param ownerThreadId the thread id (or async owner id) that held it
     * @param cause why the hold was lost: a {@link LockForceUnlockedException}, the renewal's
     *     failure, or {@code null} when renewal found the lock simply gone
     * @throws NullPointerException if {@code lockName} is null
     */
    public LockLostEvent {
        Objects.requireNonNull(lockName, "lockName must not be null");
    }
}
