package io.relock;

/**
 * Root of the unchecked exceptions Relock throws when Redis is in trouble: unreachable, too
 * slow, or answering with an error. A lock method never reports such trouble as "not
 * acquired"; it throws one of these, with the underlying client exception as the cause.
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
