package io.relock.bench;

import java.util.List;
import java.util.Locale;

/**
 * A target Relock set itself (issue 5), checked against what this run measured. A ratio goal
 * compares Relock's median with Redisson's median in the same run; an absolute goal checks
 * Relock's median alone. Counts (round trips, commands) are compared with a tolerance of
 * {@value #COUNT_TOLERANCE}, as a window's ends can split one operation.
 *
 * @param text the goal as the issue states it
 * @param caseId the case that measures it
 * @param kind how {@code target} applies
 */
record Goal(String text, String caseId, Metric metric, Kind kind, double target) {

    static final double COUNT_TOLERANCE = 0.02;

    enum Kind {
        /** Relock/Redisson at least the target. */
        RATIO_AT_LEAST,
        /** Relock/Redisson at most the target. */
        RATIO_AT_MOST,
        /** Relock's value at most the target. */
        AT_MOST,
        /** Relock's value equal to the target (within the count tolerance). */
        EQUALS
    }

    /** "A handful" of renewal calls per tick, made a number. */
    static final int HANDFUL = 5;

    static final List<Goal> ALL = List.of(
            new Goal("S1 64 threads: cycles/s", "S1/t64", Metric.CYCLES_PER_S, Kind.RATIO_AT_LEAST, 2.5),
            new Goal("S1 64 threads: client JVM CPU per cycle", "S1/t64", Metric.JVM_CPU_US_PER_OP, Kind.RATIO_AT_MOST, 0.4),
            new Goal("S1 1 thread: cycle latency p50", "S1/t1", Metric.CYCLE_P50_US, Kind.RATIO_AT_MOST, 0.75),
            new Goal("S1: round trips per uncontended cycle", "S1/t1", Metric.ROUND_TRIPS_PER_OP, Kind.EQUALS, 2),
            new Goal("S1: Redis commands per cycle, incl. inside scripts", "S1/t1", Metric.COMMANDS_PER_OP, Kind.AT_MOST, 9),
            new Goal("S2 4 clients × 8 threads: acquisitions/s", "S2/t8x4", Metric.ACQUISITIONS_PER_S, Kind.RATIO_AT_LEAST, 2),
            new Goal("S2 4 clients × 8 threads: Redis commands per acquisition", "S2/t8x4", Metric.COMMANDS_PER_OP,
                    Kind.AT_MOST, 10),
            new Goal("S3 1 waiter: hand-off p50", "S3/w1", Metric.HANDOFF_P50_US, Kind.RATIO_AT_MOST, 0.5),
            new Goal("S3 8 waiters: hand-off p50", "S3/w8", Metric.HANDOFF_P50_US, Kind.RATIO_AT_MOST, 0.5),
            new Goal("S5: threads per client", "S5/footprint", Metric.THREADS, Kind.AT_MOST, 6),
            new Goal("S5: Redis connections per client", "S5/footprint", Metric.CONNECTIONS, Kind.AT_MOST, 2),
            new Goal("S5: watchdog renewal calls per tick, 10 000 locks (a handful)", "S5/watchdog",
                    Metric.WATCHDOG_CALLS_PER_TICK, Kind.AT_MOST, HANDFUL));

    boolean isRatio() {
        return kind == Kind.RATIO_AT_LEAST || kind == Kind.RATIO_AT_MOST;
    }

    /** The target as printed: {@code ≥ 2.5×}, {@code ≤ 9}, {@code = 2}. */
    String targetText() {
        String number = target == Math.rint(target) ? Long.toString((long) target)
                : String.format(Locale.ROOT, "%.2f", target).replaceAll("0+$", "");
        return switch (kind) {
            case RATIO_AT_LEAST -> "≥ " + number + "×";
            case RATIO_AT_MOST -> "≤ " + number + "×";
            case AT_MOST -> "≤ " + number;
            case EQUALS -> "= " + number;
        };
    }

    /** Whether {@code value} (a ratio for ratio goals, Relock's value otherwise) meets the goal. */
    boolean holds(double value) {
        return switch (kind) {
            case RATIO_AT_LEAST -> value >= target;
            case RATIO_AT_MOST -> value <= target;
            case AT_MOST -> value <= target + (isCount() ? COUNT_TOLERANCE : 0);
            case EQUALS -> Math.abs(value - target) <= COUNT_TOLERANCE;
        };
    }

    private boolean isCount() {
        return metric == Metric.ROUND_TRIPS_PER_OP || metric == Metric.COMMANDS_PER_OP;
    }

    /**
     * The goal expressed as "Relock's advantage" (×, higher is better) for the chart, or NaN
     * when it is not a ratio goal.
     */
    double advantage() {
        return switch (kind) {
            case RATIO_AT_LEAST -> target;
            case RATIO_AT_MOST -> 1 / target;
            default -> Double.NaN;
        };
    }
}
