package io.relock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A lock was not acquired within the wait its caller allowed: another owner held it all that
 * time, or the wait was interrupted. This is the one "not acquired" exception of every face that
 * turns a failed acquisition into an error instead of a {@code false}: relock-reactor's
 * {@code withLock}, relock-kotlin's {@code withLock}, and Spring's {@code @WithLock} and
 * {@code RelockTemplate}. Plain {@link DistributedLock#tryLock(long, java.util.concurrent.TimeUnit)}
 * answers {@code false} instead and never throws this.
 *
 * <p>It is a {@link RelockException}, so a {@code catch (RelockException e)} sees it, but it is
 * not Redis trouble: when the store could not be reached the caller gets a
 * {@link RelockConnectionException} or {@link RelockTimeoutException}, never this.
 */
public class LockNotAcquiredException extends RelockException {

    private static final long serialVersionUID = 1L;

    /** The locks that were wanted, in the order asked for. */
    private final List<String> lockNames;
    /** The wait that ran out; null when the caller would have waited until acquired. */
    private final Duration waitTime;

    /**
     * Creates the exception for one lock whose wait ran out.
     *
     * @param lockName the lock's name
     * @param waitTime how long the caller was willing to wait (zero or less: one attempt)
     * @throws NullPointerException if {@code lockName} or {@code waitTime} is null
     */
    public LockNotAcquiredException(String lockName, Duration waitTime) {
        this(List.of(Objects.requireNonNull(lockName, "lockName must not be null")),
                Objects.requireNonNull(waitTime, "waitTime must not be null"), null);
    }

    /**
     * Creates the exception for one or more locks wanted together.
     *
     * @param lockNames the names of the locks that were wanted
     * @param waitTime how long the caller was willing to wait, or null for "until acquired"
     * @param cause the interrupt that ended the wait, or null when the wait ran out
     * @throws NullPointerException if {@code lockNames} or one of its names is null
     * @throws IllegalArgumentException if {@code lockNames} is empty
     */
    public LockNotAcquiredException(List<String> lockNames, Duration waitTime, Throwable cause) {
        super(message(lockNames, waitTime, cause), cause);
        this.lockNames = List.copyOf(lockNames);
        this.waitTime = waitTime;
    }

    private static String message(List<String> lockNames, Duration waitTime, Throwable cause) {
        Objects.requireNonNull(lockNames, "lockNames must not be null");
        if (lockNames.isEmpty()) {
            throw new IllegalArgumentException("lockNames must not be empty");
        }
        String what = lockNames.size() == 1 ? "lock '" + lockNames.get(0) + "'" : "locks " + lockNames;
        if (cause instanceof InterruptedException) {
            return what + " not acquired: interrupted while waiting";
        }
        return what + " not acquired" + (waitTime == null ? "" : " within " + waitTime.toMillis() + " ms")
                + ": another owner held it";
    }

    /**
     * The lock that was not acquired.
     *
     * @return its name; for several locks wanted together, their names joined by {@code ','}
     */
    public String lockName() {
        return String.join(",", lockNames);
    }

    /**
     * The locks that were wanted.
     *
     * @return their names, in the order asked for, never empty
     */
    public List<String> lockNames() {
        return lockNames;
    }

    /**
     * How long the caller was willing to wait, as it asked (zero or less was one attempt).
     *
     * @return the wait, or null when the caller would have waited until acquired (an interrupt
     *     ended the wait)
     */
    public Duration waitTime() {
        return waitTime;
    }
}
