package io.relock.spring;

import java.util.List;

/**
 * The lock that guarded a method was lost while the method ran: its lease expired, it was
 * force-unlocked, or the watchdog found it gone or could not renew it. For part of the method's
 * run another client may have held the same lock. Unless {@code relock.on-lock-lost=log}:
 *
 * <ul>
 * <li>a transaction that began inside the guarded call and was about to commit when the loss
 *     was found rolls back, and this exception is what its commit threw
 *     ({@link #isRolledBack()});</li>
 * <li>a method returning a {@code Mono} or a {@code Flux} (or a Kotlin {@code suspend}
 *     function) is stopped when the loss is found: its publisher is cancelled and the caller's
 *     ends with this exception;</li>
 * <li>otherwise the method did run and finished (for a {@code CompletionStage}, its stage
 *     completed), and this exception, raised after it returned, replaces its result or is added
 *     to its exception as suppressed.</li>
 * </ul>
 *
 * <p>It is a core {@link io.relock.LockLostException}, so code that catches the one that
 * relock-reactor and relock-kotlin raise catches this one too. {@link #lockName()} is the lock's
 * name, or the names joined with commas when the method held several ({@link #lockNames()}).
 */
public class LockLostException extends io.relock.LockLostException {

    private static final long serialVersionUID = 1L;

    private final transient List<String> lockNames;
    /** Whether the loss was found before a commit, which rolled back instead. */
    private final boolean rolledBack;

    /**
     * Creates the exception for a loss found after the method returned, of an owner not known.
     *
     * @param lockNames the names of the locks of which at least one was lost
     * @param cause why renewal failed, or null when the lock was simply gone
     * @throws NullPointerException if {@code lockNames} is null
     * @throws IllegalArgumentException if {@code lockNames} is empty
     */
    public LockLostException(List<String> lockNames, Throwable cause) {
        this(lockNames, 0, cause);
    }

    /**
     * Creates the exception for a loss found after the method returned.
     *
     * @param lockNames the names of the locks of which at least one was lost
     * @param ownerId the owner that held them: the calling thread's id, or for asynchronous
     *     returns an id from {@link io.relock.Relock#newOwnerId()}; 0 when not known
     * @param cause why renewal failed, or null when the lock was simply gone
     * @throws NullPointerException if {@code lockNames} is null
     * @throws IllegalArgumentException if {@code lockNames} is empty
     */
    public LockLostException(List<String> lockNames, long ownerId, Throwable cause) {
        this(lockNames, ownerId, cause, false);
    }

    private LockLostException(List<String> lockNames, long ownerId, Throwable cause, boolean rolledBack) {
        super("lock " + describe(lockNames)
                + (rolledBack ? " was lost before the transaction committed; the transaction was rolled back"
                        : " was lost while the method ran; another client may have held it meanwhile"),
                String.join(",", lockNames), ownerId, cause);
        this.lockNames = List.copyOf(lockNames);
        this.rolledBack = rolledBack;
    }

    private static String describe(List<String> lockNames) {
        if (lockNames.isEmpty()) {
            throw new IllegalArgumentException("lockNames must not be empty");
        }
        return lockNames.size() == 1 ? "'" + lockNames.get(0) + "'" : lockNames.toString();
    }

    /** The loss found by the check just before a transaction inside the guarded call commits. */
    static LockLostException beforeCommit(List<String> lockNames, long ownerId, Throwable cause) {
        return new LockLostException(lockNames, ownerId, cause, true);
    }

    /**
     * The names of the locks the method held.
     *
     * @return the names, never empty
     */
    public List<String> lockNames() {
        return lockNames;
    }

    /**
     * Whether the loss was found just before a transaction committed, which then rolled back
     * instead; {@code false} when it was found after the method returned, whatever the method
     * wrote having stayed.
     *
     * @return whether a transaction was rolled back because of the loss
     */
    public boolean isRolledBack() {
        return rolledBack;
    }
}
