package io.relock.internal.backend;

import java.util.function.BooleanSupplier;

/**
 * How long a call may keep trying through connection trouble, as instants of the client's
 * clock: until {@code deadlineNanos} at most; only until {@code patientUntilNanos} once a
 * single server refuses connections; and no longer once {@code stopped} says so (the caller
 * gave up: an interrupt, a cancel).
 */
public record Budget(long deadlineNanos, long patientUntilNanos, BooleanSupplier stopped) {

    /** The longest pause between two tries of a call within a budget. */
    public static final long MAX_RETRY_PAUSE_MILLIS = 200;

    private static final BooleanSupplier NEVER = () -> false;

    /** A budget that only its instants end. */
    public Budget(long deadlineNanos, long patientUntilNanos) {
        this(deadlineNanos, patientUntilNanos, NEVER);
    }

    /** This budget, also ended when {@code stop} says so. */
    public Budget stoppedBy(BooleanSupplier stop) {
        return new Budget(deadlineNanos, patientUntilNanos, stop);
    }
}
