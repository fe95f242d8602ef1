package io.relock;

import java.time.Duration;

/** Wall-clock time for properties that are about elapsed time itself. */
final class WallClock {

    private WallClock() {}

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
}
