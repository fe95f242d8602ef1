package io.relock.bench;

import java.util.List;
import java.util.Locale;

/**
 * A target Relock set itself (issues 5, 12, 21 and 25), checked against what this run measured. A
 * ratio goal compares Relock's median with a peer's median in the same run: Redisson's for the
 * goals of issue 5, which were set against it, the best peer's for those of issues 12 and 25; an
 * every-repeat ratio goal (issue 25) reads each repeat on its own, Relock's value over the better
 * peer's in that repeat, and holds only if the worst repeat does; an absolute goal checks
 * Relock's median alone; a round-trip goal compares it with the p50 of one EVALSHA of the lock
 * script that redis-benchmark measured on the same server in the same run (S0, one connection);
 * a floor goal (issue 25) compares it with the JVM floor of the same shape measured in the same
 * run ({@link JvmFloor}, S0); a fleet goal (issue 21, S6) checks both libraries of a mixed fleet,
 * in every repeat, not a median. Counts (round trips, commands) are compared with a tolerance of
 * {@value #COUNT_TOLERANCE}, as a window's ends can split one operation.
 *
 * @param text the goal as the issue states it
 * @param issue the issue(s) that set it
 * @param caseId the case that measures it
 * @param kind how {@code target} applies
 * @param baseline whom a ratio goal (also an every-repeat one) compares with; null for the other kinds
 * @param roundTrips for {@link Kind#ROUND_TRIPS_AT_MOST}: how many EVALSHA round trips the target
 *     multiplies ({@code ≤ 1.25× two round trips}: target 1.25, roundTrips 2); 0 otherwise
 */
record Goal(String text, String issue, String caseId, Metric metric, Kind kind, double target, Baseline baseline,
        int roundTrips) {

    static final double COUNT_TOLERANCE = 0.02;

    enum Kind {
        /** Relock over the baseline at least the target. */
        RATIO_AT_LEAST,
        /** Relock over the baseline at most the target. */
        RATIO_AT_MOST,
        /** Relock's value at most the target. */
        AT_MOST,
        /** Relock's value equal to the target (within the count tolerance). */
        EQUALS,
        /**
         * In every repeat, Relock's value over the better peer's value in that repeat at most the
         * target; measured as the worst (largest) of these ratios. Needs Relock and a peer in
         * every repeat.
         */
        RATIO_EVERY_REPEAT_AT_MOST,
        /** Relock's value over {@code roundTrips} EVALSHA round trips (S0 p50, one connection) at most the target. */
        ROUND_TRIPS_AT_MOST,
        /**
         * Relock's value over the JVM floor of its metric ({@link Report#floorOf}: the bare
         * Lettuce hand-off or two bare round trips, measured in S0 of the same run) at most the target.
         */
        FLOOR_AT_MOST,
        /** The largest value of every library of the mixed fleet, in every repeat, at most the target. */
        FLEET_AT_MOST,
        /**
         * Every value of every library of the mixed fleet, in every repeat, within a factor of
         * the target of 1 (from 1/target to target); measured as the largest such factor.
         */
        FLEET_FACTOR_WITHIN
    }

    /** Whom a ratio goal compares Relock with. */
    enum Baseline {
        /** Redisson, as issue 5 set its goals. */
        REDISSON,
        /**
         * The peer with the better median of the metric in the case (issues 12 and 25); for an
         * every-repeat goal, the peer with the better value in each repeat.
         */
        BEST_PEER
    }

    /** The bounds {@code MixedFleetTest} enforces, for the bench's mixed fleet. */
    private static final String FLEET_WAIT_TEXT = "mixed fleet: every thread of both libraries acquires within 2 s";
    private static final String FLEET_SHARE_TEXT = "mixed fleet: each library's per-thread share within 4× of equal";

    /** "A handful" of renewal calls per tick, made a number. */
    static final int HANDFUL = 5;

    static final List<Goal> ALL = List.of(
            ratio("S1 64 threads: cycles/s", "5", "S1/t64", Metric.CYCLES_PER_S, Kind.RATIO_AT_LEAST, 2.5,
                    Baseline.REDISSON),
            ratio("S1 64 threads: client JVM CPU per cycle", "5", "S1/t64", Metric.JVM_CPU_US_PER_OP,
                    Kind.RATIO_AT_MOST, 0.4, Baseline.REDISSON),
            ratio("S1 1 thread: cycle latency p50", "5", "S1/t1", Metric.CYCLE_P50_US, Kind.RATIO_AT_MOST, 0.75,
                    Baseline.REDISSON),
            new Goal("S1 1 thread: cycle latency p50, in EVALSHA round trips", "12", "S1/t1", Metric.CYCLE_P50_US,
                    Kind.ROUND_TRIPS_AT_MOST, 1.25, null, 2),
            absolute("S1: round trips per uncontended cycle", "5", "S1/t1", Metric.ROUND_TRIPS_PER_OP, Kind.EQUALS, 2),
            absolute("S1: Redis commands per cycle, incl. inside scripts", "5", "S1/t1", Metric.COMMANDS_PER_OP,
                    Kind.AT_MOST, 9),
            ratio("S1 64 threads: Redis CPU per cycle", "25", "S1/t64", Metric.REDIS_CPU_US_PER_OP,
                    Kind.RATIO_AT_MOST, 1.0, Baseline.BEST_PEER),
            ratio("S2 4 clients × 2 threads: acquisitions/s", "25", "S2/t2x4", Metric.ACQUISITIONS_PER_S,
                    Kind.RATIO_AT_LEAST, 2, Baseline.BEST_PEER),
            absolute("S2 4 clients × 2 threads: Redis commands per acquisition", "25", "S2/t2x4",
                    Metric.COMMANDS_PER_OP, Kind.AT_MOST, 10),
            ratio("S2 4 clients × 8 threads: acquisitions/s", "5", "S2/t8x4", Metric.ACQUISITIONS_PER_S,
                    Kind.RATIO_AT_LEAST, 2, Baseline.REDISSON),
            ratio("S2 4 clients × 8 threads: acquisitions/s", "12", "S2/t8x4", Metric.ACQUISITIONS_PER_S,
                    Kind.RATIO_AT_LEAST, 2, Baseline.BEST_PEER),
            absolute("S2 4 clients × 8 threads: Redis commands per acquisition", "5, 12", "S2/t8x4",
                    Metric.COMMANDS_PER_OP, Kind.AT_MOST, 10),
            ratio("S3 1 waiter, same client: hand-off p50", "5", "S3/w1", Metric.HANDOFF_P50_US, Kind.RATIO_AT_MOST, 0.5,
                    Baseline.REDISSON),
            ratio("S3 8 waiters, same client: hand-off p50", "5", "S3/w8", Metric.HANDOFF_P50_US, Kind.RATIO_AT_MOST,
                    0.5, Baseline.REDISSON),
            ratio("S3 1 waiter on another client: hand-off p50", "12, 25", "S3/w1c", Metric.HANDOFF_P50_US,
                    Kind.RATIO_AT_MOST, 0.5, Baseline.BEST_PEER),
            new Goal("S3 1 waiter on another client: hand-off p50, in EVALSHA round trips", "12", "S3/w1c",
                    Metric.HANDOFF_P50_US, Kind.ROUND_TRIPS_AT_MOST, 2, null, 1),
            absolute("S3 1 waiter on another client: hand-off p50, over the JVM floor (bare Lettuce hand-off)", "25",
                    "S3/w1c", Metric.HANDOFF_P50_US, Kind.FLOOR_AT_MOST, 1.2),
            ratio("S3 1 waiter on another client, holds of 5 ± 1 ms released once the waiter is in lock(): hand-off p50",
                    "25", "S3/w1c5", Metric.HANDOFF_P50_US, Kind.RATIO_EVERY_REPEAT_AT_MOST, 0.5, Baseline.BEST_PEER),
            ratio("S3 1 waiter on another client, the releaser asks again at once: hand-off p50", "25", "S3/w1cr",
                    Metric.HANDOFF_P50_US, Kind.RATIO_AT_MOST, 0.5, Baseline.BEST_PEER),
            ratio("S3 8 waiters on 8 other clients: hand-off p50", "12", "S3/w8c", Metric.HANDOFF_P50_US,
                    Kind.RATIO_AT_MOST, 0.5, Baseline.BEST_PEER),
            absolute("S4 RedLock across regions (RTT 4/10/20/50/100 ms): lock + unlock p50 ≤ 2.5× the majority RTT"
                    + " (20 ms)", "25", "S4/redlock-wan", Metric.CYCLE_P50_US, Kind.AT_MOST,
                    2.5 * S4FairAndRedLock.WAN_MAJORITY_RTT_MILLIS * 1000),
            absolute("S5: threads per client", "5", "S5/footprint", Metric.THREADS, Kind.AT_MOST, 6),
            absolute("S5: Redis connections per client", "5", "S5/footprint", Metric.CONNECTIONS, Kind.AT_MOST, 2),
            absolute("S5: watchdog renewal calls per tick, 10 000 locks (a handful)", "5", "S5/watchdog",
                    Metric.WATCHDOG_CALLS_PER_TICK, Kind.AT_MOST, HANDFUL),
            absolute(FLEET_WAIT_TEXT, "21", "S6/r4x2-s2x1", Metric.WAIT_MAX_MS, Kind.FLEET_AT_MOST, 2000),
            absolute(FLEET_SHARE_TEXT, "21", "S6/r4x2-s2x1", Metric.SHARE_OF_EQUAL, Kind.FLEET_FACTOR_WITHIN, 4),
            absolute(FLEET_WAIT_TEXT, "21", "S6/r2x1-s4x2", Metric.WAIT_MAX_MS, Kind.FLEET_AT_MOST, 2000),
            absolute(FLEET_SHARE_TEXT, "21", "S6/r2x1-s4x2", Metric.SHARE_OF_EQUAL, Kind.FLEET_FACTOR_WITHIN, 4));

    private static Goal ratio(String text, String issue, String caseId, Metric metric, Kind kind, double target,
            Baseline baseline) {
        return new Goal(text, issue, caseId, metric, kind, target, baseline, 0);
    }

    private static Goal absolute(String text, String issue, String caseId, Metric metric, Kind kind, double target) {
        return new Goal(text, issue, caseId, metric, kind, target, null, 0);
    }

    /** Whether the goal reads both libraries of S6's mixed fleet. */
    boolean isFleet() {
        return kind == Kind.FLEET_AT_MOST || kind == Kind.FLEET_FACTOR_WITHIN;
    }

    /** Whether the goal compares with a peer (its {@code baseline}), in the medians or in every repeat. */
    boolean isRatio() {
        return kind == Kind.RATIO_AT_LEAST || kind == Kind.RATIO_AT_MOST || kind == Kind.RATIO_EVERY_REPEAT_AT_MOST;
    }

    /**
     * The target as printed: {@code ≥ 2.5× Redisson}, {@code ≤ 0.5× best peer}, {@code ≤ 0.5× best
     * peer, every repeat}, {@code ≤ 9}, {@code = 2}, {@code ≤ 1.25× 2 RT}, {@code ≤ 1.2× JVM floor}.
     */
    String targetText() {
        String number = number(target);
        return switch (kind) {
            case RATIO_AT_LEAST -> "≥ " + number + "× " + baselineText();
            case RATIO_AT_MOST -> "≤ " + number + "× " + baselineText();
            case RATIO_EVERY_REPEAT_AT_MOST -> "≤ " + number + "× " + baselineText() + ", every repeat";
            case FLOOR_AT_MOST -> "≤ " + number + "× JVM floor";
            case AT_MOST -> "≤ " + number;
            case EQUALS -> "= " + number;
            case ROUND_TRIPS_AT_MOST -> roundTrips == 1 ? "≤ " + number + " RT" : "≤ " + number + "× " + roundTrips + " RT";
            case FLEET_AT_MOST -> "≤ " + number + " (" + metric.label() + "), both, every repeat";
            case FLEET_FACTOR_WITHIN -> number(1 / target) + "–" + number + "× (" + metric.label() + "), both, every repeat";
        };
    }

    private String baselineText() {
        return baseline == Baseline.REDISSON ? "Redisson" : "best peer";
    }

    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value)
                : String.format(Locale.ROOT, "%.2f", value).replaceAll("0+$", "");
    }

    /**
     * Whether {@code value} meets the goal: a ratio for ratio goals, the worst repeat's ratio for
     * every-repeat goals, Relock's value over the goal's round trips for round-trip goals, over
     * the JVM floor for floor goals, the worst value or factor of the fleet for fleet goals,
     * Relock's value otherwise. NaN (not measured) never holds.
     */
    boolean holds(double value) {
        return switch (kind) {
            case RATIO_AT_LEAST -> value >= target;
            case RATIO_AT_MOST, RATIO_EVERY_REPEAT_AT_MOST, ROUND_TRIPS_AT_MOST, FLOOR_AT_MOST, FLEET_AT_MOST,
                    FLEET_FACTOR_WITHIN -> value <= target;
            case AT_MOST -> value <= target + (isCount() ? COUNT_TOLERANCE : 0);
            case EQUALS -> Math.abs(value - target) <= COUNT_TOLERANCE;
        };
    }

    private boolean isCount() {
        return metric == Metric.ROUND_TRIPS_PER_OP || metric == Metric.COMMANDS_PER_OP;
    }

    /**
     * The value Relock's median must reach (at least, for a metric where higher is better; at
     * most otherwise) for the goal to hold.
     *
     * @param baselineValue the baseline's median, for ratio goals (every-repeat goals: the
     *     median's best peer, so the value is what the medians need, not each repeat)
     * @param roundTripMicros one EVALSHA round trip (S0 p50), for round-trip goals
     * @param floorMicros the JVM floor of the goal's metric ({@link Report#floorOf}), for floor goals
     */
    double required(double baselineValue, double roundTripMicros, double floorMicros) {
        return switch (kind) {
            case RATIO_AT_LEAST, RATIO_AT_MOST, RATIO_EVERY_REPEAT_AT_MOST -> target * baselineValue;
            case AT_MOST, EQUALS, FLEET_AT_MOST, FLEET_FACTOR_WITHIN -> target;
            case ROUND_TRIPS_AT_MOST -> target * roundTrips * roundTripMicros;
            case FLOOR_AT_MOST -> target * floorMicros;
        };
    }
}
