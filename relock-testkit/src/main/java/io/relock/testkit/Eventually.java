package io.relock.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Bounded polling for conditions that only Redis can report: a key expired, a waiter
 * subscribed to a lock's channel, a replica caught up. For waiting on another thread of the
 * test, use a latch or a future instead.
 *
 * <pre>{@code
 * Eventually.await(Duration.ofSeconds(10), "the lease ran out", () -> !lock.isLocked());
 * }</pre>
 */
public final class Eventually {

    private static final long POLL_MILLIS = 10;

    private Eventually() {}

    /**
     * Returns once {@code condition} is true, checking it every 10 ms.
     *
     * @param bound how long to wait at most
     * @param what the condition in words, for the failure message
     * @param condition the condition; exceptions it throws pass through
     * @throws NullPointerException if an argument is null
     * @throws AssertionError if the condition is still false after {@code bound}, or the thread
     *     is interrupted while waiting (its interrupt flag is then set again)
     */
    public static void await(Duration bound, String what, BooleanSupplier condition) {
        Objects.requireNonNull(bound, "bound must not be null");
        Objects.requireNonNull(what, "what must not be null");
        Objects.requireNonNull(condition, "condition must not be null");
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not true within " + bound + ": " + what);
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what, e);
            }
        }
    }
}
