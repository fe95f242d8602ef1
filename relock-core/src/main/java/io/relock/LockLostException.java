package io.relock;

import java.util.List;
import java.util.Objects;

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

    /** The locks whose hold was lost (at least one of them was). */
    private final List<String> lockNames;

    /** The owner that held them. */
    private final long ownerId;

    /** Whether the loss was found before a transaction committed, which rolled back instead. */
    private final boolean rolledBack;

    /**
     * Creates the exception for one lost hold.
     *
     * @param lockName the lock whose hold was lost
     * @param ownerId the owner that held it (a thread id or an id from {@link Relock#newOwnerId()})
     * @param cause why it was lost, may be {@code null} (the lock was simply gone)
     * @throws NullPointerException if {@code lockName} is null
     */
    public LockLostException(String lockName, long ownerId, Throwable cause) {
        this(List.of(Objects.requireNonNull(lockName, "lockName must not be null")), ownerId, cause, false);
    }

    /**
     * Creates the exception for work that ran under several holds, of which at least one was
     * lost.
     *
     * @param lockNames the locks the work held
     * @param ownerId the owner that held them; 0 when not known
     * @param cause why it was lost, may be {@code null} (the lock was simply gone)
     * @param rolledBack whether the loss was found just before a transaction committed, which
     *     then rolled back instead
     * @throws NullPointerException if {@code lockNames} or one of its names is null
     * @throws IllegalArgumentException if {@code lockNames} is empty
     */
    public LockLostException(List<String> lockNames, long ownerId, Throwable cause, boolean rolledBack) {
        super(message(lockNames, cause, rolledBack), cause);
        this.lockNames = List.copyOf(lockNames);
        this.ownerId = ownerId;
        this.rolledBack = rolledBack;
    }

    private static String message(List<String> lockNames, Throwable cause, boolean rolledBack) {
        Objects.requireNonNull(lockNames, "lockNames must not be null");
        if (lockNames.isEmpty()) {
            throw new IllegalArgumentException("lockNames must not be empty");
        }
        String what = lockNames.size() == 1 ? "lock '" + lockNames.get(0) + "'" : "locks " + lockNames;
        String when = rolledBack ? " was lost before the transaction committed; the transaction was rolled back"
                : " was lost while the work was running; another owner may have held it meanwhile";
        return "the hold of " + what + when + (cause == null ? " (it was gone at renewal)" : ": " + cause);
    }

    /**
     * The lock whose hold was lost.
     *
     * @return its name as passed to {@code getLock}; for work that held several locks, their
     *     names joined by {@code ','}
     */
    public String lockName() {
        return String.join(",", lockNames);
    }

    /**
     * The locks the work held, of which at least one was lost.
     *
     * @return their names, never empty
     */
    public List<String> lockNames() {
        return lockNames;
    }

    /**
     * The owner whose hold was lost.
     *
     * @return a thread id, or an id from {@link Relock#newOwnerId()}; 0 when not known
     */
    public long ownerId() {
        return ownerId;
    }

    /**
     * Whether the loss was found just before a transaction committed, which then rolled back
     * instead (Spring's {@code @WithLock} around a transaction); {@code false} when it was found
     * while or after the work ran, whatever it wrote having stayed.
     *
     * @return whether a transaction was rolled back because of the loss
     */
    public boolean isRolledBack() {
        return rolledBack;
    }
}
