package io.relock;

/**
 * Told when a watchdog-renewed lock (one taken without a lease, or with {@code -1}) that this
 * client holds is lost: the watchdog found it gone on Redis (it
 * expired, was force-unlocked, or the server restarted without it), or the watchdog could not
 * renew it before its lease ran out. {@link LockLostEvent#cause()} tells which: a
 * {@link LockForceUnlockedException} for a Relock force-unlock, the failure for a renewal that
 * failed, {@code null} for a lock simply gone. From that moment another owner may hold the
 * lock; stop the work the lock protected. The holder's next {@code unlock()} throws
 * {@link IllegalMonitorStateException} saying the lease was lost.
 *
 * <p>A lock taken with a fixed lease is not watched: nothing renews it, so its expiry is
 * expected, and the holder learns of it from {@code unlock()}.
 *
 * <p>Register with {@link Relock#addLockListener(LockListener)}. Listeners are called on one of
 * the client's worker threads, never on the thread that holds the lock, and should return
 * quickly. An exception thrown by a listener is logged and does not affect other listeners.
 *
 * <p>A listener is for application logic that must act on a loss. To watch every event of a
 * client (acquires, releases, ticks, losses) for metrics or logs, use a {@link LockObserver}
 * instead: it is told of losses too, synchronously and without a thread hop.
 */
@FunctionalInterface
public interface LockListener {

    /**
     * Called once per lost hold.
     *
     * @param event which lock, which owner, and why
     */
    void onLockLost(LockLostEvent event);
}
