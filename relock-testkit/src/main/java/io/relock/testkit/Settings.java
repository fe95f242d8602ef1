package io.relock.testkit;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks the testkit's builders ({@link RedisServer.Builder}, {@link SentinelTopology.Builder},
 * {@link ClusterTopology.Builder}) share: each setting may be given once, and durations are
 * validated the same way everywhere, with messages that name the setting and the value.
 */
final class Settings {

    private Settings() {
    }

    /**
     * Returns {@code value} for a setting that may be given once.
     *
     * @param current the setting's value so far; null while it is not set
     * @param value the new value, already validated (a null one is rejected here)
     * @param name the setting's name, for the messages
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalStateException if {@code current} is not null: "name was already set to current"
     */
    static <T> T once(T current, T value, String name) {
        Objects.requireNonNull(value, name + " must not be null");
        if (current != null) {
            throw new IllegalStateException(name + " was already set to " + current);
        }
        return value;
    }

    /**
     * Throws if a switch that may be turned on once is on already; the caller turns it on after
     * its own checks, so a rejected call leaves the builder as it was.
     *
     * @param on whether it is on already
     * @param name the switch's name, for the message
     * @throws IllegalStateException if it is on already: "name was already set"
     */
    static void requireOff(boolean on, String name) {
        if (on) {
            throw new IllegalStateException(name + " was already set");
        }
    }

    /**
     * Throws unless {@code duration} is positive.
     *
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is zero or negative
     */
    static Duration requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + duration);
        }
        return duration;
    }

    /**
     * Throws unless {@code duration} is at least a millisecond (Redis takes its timeouts in
     * whole milliseconds).
     *
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is shorter than a millisecond
     */
    static Duration requireMillis(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.toMillis() < 1) {
            throw new IllegalArgumentException(name + " must be at least a millisecond: " + duration);
        }
        return duration;
    }

    /**
     * Throws unless {@code duration} is zero or positive.
     *
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is negative
     */
    static Duration requireNonNegative(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative: " + duration);
        }
        return duration;
    }
}
