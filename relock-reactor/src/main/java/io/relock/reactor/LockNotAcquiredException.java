package io.relock.reactor;

import io.relock.RelockException;
import java.time.Duration;
import java.util.Objects;

/**
 * The error of a {@link ReactiveLock#tryWithLock(Duration, reactor.core.publisher.Mono) tryWithLock}
 * whose lock was not acquired within its wait: another owner held it all that time. The work was
 * not subscribed to and nothing is held. A failure of Redis is never reported this way; it is a
 * {@link RelockException} of its own.
 */
public class LockNotAcquiredException extends RelockException {

    private static final long serialVersionUID = 1L;

    /** The lock that was not acquired. */
    private final String lockName;
    /** The wait that ran out. */
    private final Duration waitTime;

    /**
     * Creates the exception.
     *
     * @param lockName the lock's name
     * @param waitTime how long the caller was willing to wait
     * @throws NullPointerException if {@code lockName} or {@code waitTime} is null
     */
    public LockNotAcquiredException(String lockName, Duration waitTime) {
        super("lock '" + Objects.requireNonNull(lockName, "lockName must not be null") + "' was not acquired within "
                + Objects.requireNonNull(waitTime, "waitTime must not be null").toMillis() + " ms");
        this.lockName = lockName;
        this.waitTime = waitTime;
    }

    /**
     * The lock that was not acquired.
     *
     * @return its name
     */
    public String lockName() {
        return lockName;
    }

    /**
     * How long the caller waited (as it asked; a wait of zero or less was one attempt).
     *
     * @return the wait
     */
    public Duration waitTime() {
        return waitTime;
    }
}
