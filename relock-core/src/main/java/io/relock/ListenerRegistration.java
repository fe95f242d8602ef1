package io.relock;

/**
 * A listener's registration; closing it stops the calls. Returned by
 * {@link DistributedLock#addLostListener(long, LockListener)}.
 */
@FunctionalInterface
public interface ListenerRegistration extends AutoCloseable {

    /**
     * Stops calling the listener. Idempotent; a call already running on a worker thread may
     * still finish.
     */
    @Override
    void close();
}
