package io.relock.internal;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a waiter spends the time between two acquire attempts: parked on the lock's unlock
 * channel until a release message or the holder's TTL ({@link #PUB_SUB}), or sleeping on a timer
 * by capped exponential backoff ({@link #backoff}), which needs no subscription at all.
 */
interface WaitPolicy {

    /** Subscribe to the unlock channel and park until a release message or the holder's TTL. */
    WaitPolicy PUB_SUB = new WaitPolicy() {
        @Override
        public boolean subscribes() {
            return true;
        }

        @Override
        public long pauseMillis(int failedAttempts) {
            throw new UnsupportedOperationException("a pub/sub waiter parks on its channel");
        }

        @Override
        public String toString() {
            return "pub/sub";
        }
    };

    /** Whether waiters subscribe to the unlock channel; if not, they pause {@link #pauseMillis}. */
    boolean subscribes();

    /** The pause before the next attempt, after {@code failedAttempts} (1 or more) failed ones. */
    long pauseMillis(int failedAttempts);

    /**
     * Capped exponential backoff with "equal jitter": at least half of each step, so contenders
     * spread out but still back off.
     */
    static WaitPolicy backoff(Duration initial, Duration max) {
        long initialMillis = initial.toMillis();
        long maxMillis = max.toMillis();
        return new WaitPolicy() {
            @Override
            public boolean subscribes() {
                return false;
            }

            @Override
            public long pauseMillis(int failedAttempts) {
                int doublings = Math.min(failedAttempts - 1, 30);
                long ceiling = Math.min(maxMillis, initialMillis << doublings);
                return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
            }

            @Override
            public String toString() {
                return "backoff " + initialMillis + ".." + maxMillis + " ms";
            }
        };
    }
}
