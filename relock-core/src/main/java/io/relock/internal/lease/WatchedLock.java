package io.relock.internal.lease;

import io.relock.internal.backend.Renewal;


/**
 * What a {@link Hold} needs of its lock to be renewed and reported: the engine in production,
 * a plain stub in the watchdog's unit tests (which have no client runtime to build an engine on).
 */
public interface WatchedLock {

    /** The lock's name, as listeners and {@link io.relock.HeldLock} give it. */
    String getName();

    /** The Redis key: a hold is known by its key and owner field. */
    String key();

    /** The hash field (or token) that identifies {@code owner} in this lock type's data. */
    String fieldOf(long owner);

    /** The lock type's name (see {@code LockDriver.type()}). */
    String type();

    /** How this lock type's holds are renewed (see {@link io.relock.internal.backend.RenewalGateway}). */
    Renewal renewal();

    /** A hold of this lock was found lost: this client's waiters parked behind it must not wait for it. */
    default void holdLost() {}
}
