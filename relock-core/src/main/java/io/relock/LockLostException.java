package io.relock;

/**
 * The hold a piece of work ran under was lost while the work was running: the watchdog found
 * the lock gone from Redis (its lease ran out, it was force-unlocked, Redis lost it) or could
 * not renew it in time. From that moment another owner may hold the lock, so the work was
 * stopped (a reactive pipeline is cancelled, a coroutine's scope is cancelled) and this is
 * what it ended with. {@link #getCause()} is {@link LockLostEvent#cause()}: why the hold went.
 *
 * <p>Thrown by the faces that tie a hold to a piece of work (relock-reactor, relock-kotlin,
 * Spring's {@code @WithLock}); plain {@code lock()} callers learn of a loss from a
 * {@link LockListener} or from {@code unlock()}.
 */
public class LockLostException extends RelockException {

    private static final long serialVersionUID = 1L;

    /** The lock whose hold was lost. */
    private final String lockName;

    /** The owner that held it. */
    private final long ownerId;

    /**
     * Creates the exception for one lost hold.
     *
     * @param lockName the lock whose hold was lost
     * @param ownerId the owner that held it (a thread id or an id from {@link Relock#newOwnerId()})
     * @param cause why it was lost, may be {@code null} (the lock was simply gone)
     */
    public LockLostException(String lockName, long ownerId, Throwable cause) {
        this("the hold of lock '" + lockName + "' was lost while the work was running"
                + (cause == null ? " (it was gone from Redis at renewal)" : ": " + cause), lockName, ownerId, cause);
    }

    /**
     * Creates the exception with a message of the caller's.
     *
     * @param message what was lost and what was stopped
     * @param lockName the lock whose hold was lost
     * @param ownerId the owner that held it
     * @param cause why it was lost, may be {@code null}
     */
    protected LockLostException(String message, String lockName, long ownerId, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
        this.ownerId = ownerId;
    }

    /**
     * The lock whose hold was lost.
     *
     * @return its name as passed to {@code getLock}
     */
    public String lockName() {
        return lockName;
    }

    /**
     * The owner whose hold was lost.
     *
     * @return a thread id, or an id from {@link Relock#newOwnerId()}
     */
    public long ownerId() {
        return ownerId;
    }
}
