package io.relock.demo;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Bounded polling: ask Redis a question again and again until the answer is yes or a deadline
 * passes. The pause between questions only paces the loop; what the demo proves comes from the
 * answers, never from having slept.
 */
final class Poll {

    private Poll() {}

    /**
     * Evaluates {@code condition} every {@code interval} until it holds or {@code timeout} has
     * passed (it is evaluated once more at the deadline).
     *
     * @return {@code true} if the condition held in time
     * @throws InterruptedException if interrupted while pausing
     */
    static boolean until(Duration timeout, Duration interval, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            Thread.sleep(Math.max(1, Math.min(interval.toMillis(), left / 1_000_000)));
        }
    }

    /**
     * Runs {@code sample} every {@code interval} for {@code duration}: an observation window of
     * fixed length, such as "watch the lock for three leases".
     *
     * @return how many samples were taken
     * @throws InterruptedException if interrupted while pausing
     */
    static int during(Duration duration, Duration interval, Runnable sample) throws InterruptedException {
        long end = System.nanoTime() + duration.toNanos();
        int samples = 0;
        while (true) {
            sample.run();
            samples++;
            long left = end - System.nanoTime();
            if (left <= 0) {
                return samples;
            }
            Thread.sleep(Math.max(1, Math.min(interval.toMillis(), left / 1_000_000)));
        }
    }
}
