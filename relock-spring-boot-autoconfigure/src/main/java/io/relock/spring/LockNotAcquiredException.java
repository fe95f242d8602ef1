package io.relock.spring;

import java.time.Duration;
import java.util.List;

/**
 * A lock was not acquired within its wait time (or the wait was interrupted, in which case the
 * thread's interrupt flag is set and the cause is the {@link InterruptedException}); the code
 * it guards did not run. Redis trouble is not reported with this exception but with
 * {@code io.relock.RelockException}.
 */
public class LockNotAcquiredException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<String> lockNames;
    private final transient Duration waitTime;

    /**
     * Creates the exception.
     *
     * @param lockNames the names of the locks that were wanted
     * @param waitTime how long the caller was willing to wait, or null for "until acquired"
     * @param cause the interrupt that ended the wait, or null
     */
    public LockNotAcquiredException(List<String> lockNames, Duration waitTime, Throwable cause) {
        super(message(lockNames, waitTime, cause), cause);
        this.lockNames = List.copyOf(lockNames);
        this.waitTime = waitTime;
    }

    private static String message(List<String> lockNames, Duration waitTime, Throwable cause) {
        String what = lockNames.size() == 1 ? "lock '" + lockNames.get(0) + "'" : "locks " + lockNames;
        if (cause instanceof InterruptedException) {
            return what + " not acquired: interrupted while waiting";
        }
        return what + " not acquired" + (waitTime == null ? "" : " within " + waitTime.toMillis() + " ms");
    }

    /**
     * The names of the locks that were wanted.
     *
     * @return the names, never empty
     */
    public List<String> lockNames() {
        return lockNames;
    }

    /**
     * How long the caller was willing to wait.
     *
     * @return the wait time, or null when it would have waited until acquired
     */
    public Duration waitTime() {
        return waitTime;
    }
}
