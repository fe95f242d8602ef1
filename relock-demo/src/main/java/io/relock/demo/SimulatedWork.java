package io.relock.demo;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Stands in for the real work inside a critical section (a database call, a payment
 * provider). This is the only place the demo sleeps for a reason other than pacing a poll.
 */
final class SimulatedWork {

    private SimulatedWork() {}

    /** Works for {@code duration}. */
    static void takes(Duration duration) throws InterruptedException {
        Thread.sleep(duration.toMillis());
    }

    /** Works for a random time between {@code min} and {@code max}. */
    static void takesBetween(Duration min, Duration max) throws InterruptedException {
        Thread.sleep(ThreadLocalRandom.current().nextLong(min.toMillis(), max.toMillis() + 1));
    }
}
