package io.relock.spring;

import java.util.List;

/**
 * The lock that guarded a method was lost while the method ran: its lease expired, or the
 * watchdog found it gone or could not renew it. The method did run, and it finished (its result
 * or exception is what this exception replaces or carries as suppressed), but for part of its
 * run another client may have held the same lock. Thrown after the method returned, unless
 * {@code relock.on-lock-lost=log}.
 */
public class LockLostException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<String> lockNames;

    /**
     * Creates the exception.
     *
     * @param lockNames the names of the locks of which at least one was lost
     * @param cause why renewal failed, or null when the lock was simply gone
     */
    public LockLostException(List<String> lockNames, Throwable cause) {
        super("lock " + (lockNames.size() == 1 ? "'" + lockNames.get(0) + "'" : lockNames.toString())
                + " was lost while the method ran; another client may have held it meanwhile", cause);
        this.lockNames = List.copyOf(lockNames);
    }

    /**
     * The names of the locks the method held.
     *
     * @return the names, never empty
     */
    public List<String> lockNames() {
        return lockNames;
    }
}
