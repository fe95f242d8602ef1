package io.relock;

/**
 * Sees what a client's locks do, for metrics, tracing and logs: every acquire (how long it
 * waited and how it ended), every release (how long the lock was held), every lost lease,
 * every force-unlock, and every watchdog tick. {@code relock-micrometer} implements it; so can
 * an application.
 *
 * <p>Register on the configuration ({@link RelockConfig.Builder#observer(LockObserver)}) or on
 * a running client ({@link Relock#addObserver(LockObserver)}). A client without observers does
 * no work for them: no event objects are made and no clock is read.
 *
 * <p>Methods are called synchronously on the thread where the event happens: the caller's
 * thread, one of the client's I/O threads (an acquire that ends on a reply, a release) or its
 * timer thread (watchdog ticks, lost leases). They must return quickly and must not block or
 * call Redis through this client. An exception thrown by an observer is logged and does not
 * affect the lock or other observers. Every method has an empty default, so an observer
 * overrides only what it needs.
 *
 * <p>Per lock, the order is: {@link #onAcquireStart}, then {@link #onAcquireEnd}; if acquired,
 * later {@link #onRelease} once the owner's last hold ends (re-entries are acquires of their
 * own, each followed by nothing until the last unlock). A lease lost before that is reported
 * by {@link #onLockLost} when the watchdog notices, and the owner's {@code unlock()} then
 * reports a release with {@link ReleaseEvent.Outcome#LOST}. A RedLock or multi-lock reports
 * through the clients of its members, one acquire and one release per member.
 *
 * <p>An observer watches; it must not act on the lock. Code that must stop work when a hold is
 * lost registers a {@link LockListener}, which runs off the I/O and timer threads and may take
 * its time.
 */
public interface LockObserver {

    /**
     * An acquire begins, before its first command, on the thread that asked for the lock (so a
     * tracing span started here has the caller's span as its parent).
     *
     * @param lockName the lock's name
     * @param lockType the lock's type ({@link HeldLock#type()} lists them)
     * @param ownerId the thread id or async owner id that asks
     * @return anything; it is passed back to {@link #onAcquireEnd} of the same acquire, e.g. a
     *     started span. The default returns {@code null}
     */
    default Object onAcquireStart(String lockName, String lockType, long ownerId) {
        return null;
    }

    /**
     * An acquire ended: the lock was acquired (or re-entered), the wait ran out, the caller was
     * interrupted, or it failed.
     *
     * @param event what happened
     * @param context what {@link #onAcquireStart} returned for this acquire
     */
    default void onAcquireEnd(AcquireEvent event, Object context) {
    }

    /**
     * An owner's last hold of a lock ended through {@code unlock()}: it was released, or the
     * unlock found that the lease had been lost.
     *
     * @param event which lock, how long it was held, and how it ended
     */
    default void onRelease(ReleaseEvent event) {
    }

    /**
     * The watchdog found a lock this client holds gone, or could not renew it before its lease
     * ran out (see {@link LockListener}, which is told the same).
     *
     * @param event which lock, which owner, and why
     */
    default void onLockLost(LockLostEvent event) {
    }

    /**
     * {@code forceUnlock()} was called through this client.
     *
     * @param event which lock, and whether there was anything to remove
     */
    default void onForceUnlock(ForceUnlockEvent event) {
    }

    /**
     * A watchdog tick's renewals completed (ticks with nothing to renew report zeros).
     *
     * @param event how many holds were renewed, failed or found lost, and how late the tick ran
     */
    default void onWatchdogTick(WatchdogTickEvent event) {
    }
}
