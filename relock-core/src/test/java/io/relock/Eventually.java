package io.relock;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded polling for conditions that only Redis can report (key expiry, subscription counts). */
final class Eventually {

    private Eventually() {}

    /**
     * Lets wall-clock time pass, for properties that are about elapsed time itself (a lease
     * outliving several watchdog timeouts). Never used to wait for another thread.
     */
    static void letTimePass(Duration duration) {
        long end = System.nanoTime() + duration.toNanos();
        for (long left = duration.toNanos(); left > 0; left = end - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

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
