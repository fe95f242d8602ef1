package io.relock.cli;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded polling for conditions only Redis can report (a waiter subscribed or queued). */
final class Eventually {

    static final Duration PROMPTLY = Duration.ofSeconds(10);

    private Eventually() {}

    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PROMPTLY.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not true within " + PROMPTLY + ": " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what, e);
            }
        }
    }
}
