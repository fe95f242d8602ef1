package io.relock;

/**
 * Root of every unchecked exception Relock throws of its own, so one {@code catch} sees them all.
 * Its subclasses say what happened:
 * <ul>
 *   <li>trouble with the store: {@link RelockConnectionException} (unreachable),
 *       {@link RelockTimeoutException} (too slow), {@link RelockReplicaSyncException} (replicas did
 *       not confirm), or a plain {@code RelockException} for an error reply, each with the
 *       underlying client exception as the cause. A lock method never reports such trouble as
 *       "not acquired";</li>
 *   <li>{@link LockNotAcquiredException}: a face that turns "not acquired" into an error (reactive,
 *       Kotlin, Spring) waited as long as it was allowed;</li>
 *   <li>{@link LockLostException}: work that ran under a hold was stopped because the hold was
 *       lost.</li>
 * </ul>
 *
 * <p>Misuse is reported with the JDK's exceptions instead: {@link IllegalArgumentException} and
 * {@link NullPointerException} for bad arguments, {@link IllegalMonitorStateException} for
 * unlocking a lock the caller does not hold, {@link IllegalStateException} for a closed client.
 */
public class RelockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message and the cause reported by the Redis client.
     *
     * @param message what Relock was doing and on which lock
     * @param cause the underlying failure, may be {@code null}
     */
    public RelockException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * Creates an exception without a cause.
     *
     * @param message what went wrong
     */
    public RelockException(String message) {
        super(message);
    }
}
