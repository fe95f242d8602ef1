package io.relock.spring;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded polling for conditions only Redis can report (a key's expiry, a waiter's subscription). */
final class Eventually {

    private Eventually() {}

    static void await(Duration bound, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not true within " + bound + ": " + what);
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
