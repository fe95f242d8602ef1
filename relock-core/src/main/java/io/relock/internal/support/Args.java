package io.relock.internal.support;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Argument checks shared by every public entry point: {@link NullPointerException} for null,
 * {@link IllegalArgumentException} for a bad value, {@link IllegalStateException} for misuse,
 * each message naming the argument and the value.
 */
public final class Args {

    /** The lease value meaning "no lease, the watchdog renews" (Redisson's convention). */
    public static final long WATCHDOG_LEASE = -1;

    /** Waits at least this long count as "forever", so deadlines never overflow. */
    public static final long FOREVER_NANOS = TimeUnit.DAYS.toNanos(365L * 100);

    // Redis adds the lease to its clock in ms; beyond this the sum would overflow and Redis
    // would reject PEXPIRE, so such a lease is the caller's mistake, reported before any I/O.
    private static final long MAX_LEASE_MILLIS = 1L << 52;

    private Args() {}

    public static <T> T notNull(T value, String name) {
        if (value == null) {
            throw new NullPointerException(name + " must not be null");
        }
        return value;
    }

    public static void require(boolean condition, String format, Object... args) {
        if (!condition) {
            throw new IllegalArgumentException(String.format(format, args));
        }
    }

    /** Rejects a duration outside {@code [min, max]}, naming the setting, the bounds and the value. */
    public static Duration between(Duration value, Duration min, Duration max, String name) {
        require(value.compareTo(min) >= 0 && value.compareTo(max) <= 0,
                "%s must be at least %s and at most %s: %s", name, min, max, value);
        return value;
    }

    public static void setOnce(Object current, String name) {
        if (current != null) {
            throw new IllegalStateException(name + " was already set to " + current);
        }
    }

    /**
     * The one rule for a lock's (or election's) name, wherever a name is taken: not null, not
     * blank (empty or only whitespace, which names no lock a reader could tell apart), and
     * well-formed UTF-16.
     */
    public static String lockName(String name) {
        notNull(name, "name");
        require(!name.isBlank(), "name must not be blank: '%s'", name);
        return wellFormed(name, "name");
    }

    /**
     * Rejects text with an unpaired UTF-16 surrogate: it has no UTF-8 form, and encoding would
     * turn it into '?', so that different names would name one lock.
     */
    public static String wellFormed(String text, String name) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(String.format(
                        "%s must be well-formed UTF-16: unpaired surrogate U+%04X at index %d", name, (int) c, i));
            }
        }
        return text;
    }

    /**
     * The lease in milliseconds, or {@link #WATCHDOG_LEASE}.
     */
    public static long leaseMillis(long leaseTime, TimeUnit unit) {
        notNull(unit, "unit");
        if (leaseTime == WATCHDOG_LEASE) {
            return WATCHDOG_LEASE;
        }
        require(leaseTime > 0, "leaseTime must be positive, or -1 for the watchdog: %s %s", leaseTime, unit);
        long millis = unit.toMillis(leaseTime);
        require(millis >= 1, "leaseTime must be at least 1 ms: %s %s", leaseTime, unit);
        require(millis <= MAX_LEASE_MILLIS && millis != Long.MAX_VALUE,
                "leaseTime overflows milliseconds: %s %s (at most %s ms)", leaseTime, unit, MAX_LEASE_MILLIS);
        return millis;
    }

    /**
     * The wait in nanoseconds: 0 for one attempt, capped at {@link #FOREVER_NANOS}.
     */
    public static long waitNanos(long waitTime, TimeUnit unit) {
        notNull(unit, "unit");
        if (waitTime <= 0) {
            return 0;
        }
        return Math.min(unit.toNanos(waitTime), FOREVER_NANOS);
    }
}
