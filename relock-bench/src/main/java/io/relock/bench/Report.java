package io.relock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything one bench run measured, and its readings: medians, ratios to the best peer, the
 * ceiling, the JVM floor, the goals and the chart's bars; {@link ReportText}, {@link ReportMarkdown}
 * and {@link ReportJson} write them out.
 *
 * <p>Every number is the median over the repeats, with the smallest and largest value beside
 * it. Relock is compared with the best peer per metric: of Redisson and RedisLockRegistry, the
 * one whose median is better in that case (a ratio is Relock's median over that peer's, with
 * the range of the per-repeat ratios, repeat i of Relock over repeat i of that peer), and with
 * this machine's ceiling as S0 measured it in the same run: half the EVALSHA rate for cycles
 * per second (a cycle is two script calls), the EVALSHA p50 as the time of one round trip.
 */
final class Report {

    /**
     * One case's result from one worker JVM.
     *
     * @param position 0 if this library's worker ran first in its repeat, 1 if second, …; {@link #NOT_RUN}
     *     for a library that the scenario does not run (the result then only says why)
     * @param result the worker's JSON for the case
     */
    record Run(int repeat, int position, Library library, Map<String, Object> result) {

        static final int NOT_RUN = -1;

        String caseId() {
            return (String) result.get("case");
        }

        Map<String, Object> metrics() {
            return Json.object(result.get("metrics"));
        }

        Map<String, Object> checks() {
            return Json.object(result.get("checks"));
        }

        Map<String, Object> details() {
            return Json.object(result.get("details"));
        }

        String error() {
            return (String) result.get("error");
        }

        String unavailable() {
            return (String) result.get("unavailable");
        }

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("repeat", repeat);
            json.put("position", position);
            json.putAll(result);
            return json;
        }
    }

    /** One metric of one library in one case, over the repeats. */
    record Values(List<Double> byRepeat) {

        boolean isEmpty() {
            return byRepeat.stream().allMatch(value -> value == null);
        }

        List<Double> present() {
            return byRepeat.stream().filter(value -> value != null).toList();
        }

        double median() {
            return Report.median(present());
        }

        double min() {
            return present().stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        }

        double max() {
            return present().stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        }

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("median", median());
            json.put("min", min());
            json.put("max", max());
            json.put("by_repeat", byRepeat);
            return json;
        }
    }

    /**
     * A bar group of the chart: Relock's advantage over the best peer (×, higher is better for
     * Relock), and the advantage the strictest goal on that metric asks for (NaN if none).
     */
    record Bar(String label, double advantage, double goalAdvantage) {}

    /** Where the chart looks, and what it calls it. */
    private record ChartItem(String caseId, Metric metric, String label) {}

    private static final List<ChartItem> CHART = List.of(
            new ChartItem("S1/t1", Metric.CYCLES_PER_S, "S1 1 thread cycles/s"),
            new ChartItem("S1/t64", Metric.CYCLES_PER_S, "S1 64 threads cycles/s"),
            new ChartItem("S1/t1", Metric.CYCLE_P50_US, "S1 1 thread p50"),
            new ChartItem("S1/t64", Metric.JVM_CPU_US_PER_OP, "S1 64 thr. CPU/cycle"),
            new ChartItem("S1/t64", Metric.REDIS_CPU_US_PER_OP, "S1 64 thr. Redis CPU/cycle"),
            new ChartItem("S1/t1", Metric.ROUND_TRIPS_PER_OP, "S1 round trips/cycle"),
            new ChartItem("S1/t1", Metric.COMMANDS_PER_OP, "S1 commands/cycle"),
            new ChartItem("S2/t2x4", Metric.ACQUISITIONS_PER_S, "S2 4×2 acq/s"),
            new ChartItem("S2/t2x4", Metric.COMMANDS_PER_OP, "S2 4×2 commands/acq"),
            new ChartItem("S2/t8x4", Metric.ACQUISITIONS_PER_S, "S2 4×8 acq/s"),
            new ChartItem("S2/t8x4", Metric.COMMANDS_PER_OP, "S2 4×8 commands/acq"),
            new ChartItem("S3/w1", Metric.HANDOFF_P50_US, "S3 1 waiter same client p50"),
            new ChartItem("S3/w8", Metric.HANDOFF_P50_US, "S3 8 waiters same client p50"),
            new ChartItem("S3/w1c", Metric.HANDOFF_P50_US, "S3 1 waiter other client p50"),
            new ChartItem("S3/w1c5", Metric.HANDOFF_P50_US, "S3 other client 5±1 ms hold p50"),
            new ChartItem("S3/w1cr", Metric.HANDOFF_P50_US, "S3 other client re-asking p50"),
            new ChartItem("S3/w8c", Metric.HANDOFF_P50_US, "S3 8 waiters 8 clients p50"),
            new ChartItem("S3/w1j", Metric.HANDOFF_P50_US, "S3 1 waiter other JVM p50"),
            new ChartItem("S4/fair10", Metric.ACQUISITIONS_PER_S, "S4 fair 10 waiters acq/s"),
            new ChartItem("S4/redlock", Metric.CYCLES_PER_S, "S4 RedLock cycles/s"),
            new ChartItem("S5/footprint", Metric.THREADS, "S5 threads/client"),
            new ChartItem("S5/footprint", Metric.CONNECTIONS, "S5 connections/client"),
            new ChartItem("S5/watchdog", Metric.WATCHDOG_CALLS_PER_TICK, "S5 renewal calls/tick"),
            new ChartItem(S7Reactive.CASE, Metric.ACQUISITIONS_PER_S, "S7 reactive 1000 subs acq/s"),
            new ChartItem(S7Reactive.CASE, Metric.WAIT_P99_US, "S7 reactive wait p99"),
            new ChartItem(S7Reactive.CASE, Metric.THREADS_USED, "S7 reactive JVM threads"));

    /**
     * A reading against the ceiling: a rate as a share of half the EVALSHA rate with
     * {@code connections} connections, or (connections 0) a latency in EVALSHA round trips.
     */
    record CeilingItem(String caseId, Metric metric, int connections) {

        boolean isRate() {
            return connections > 0;
        }
    }

    static final List<CeilingItem> CEILING_ITEMS = List.of(
            new CeilingItem("S1/t1", Metric.CYCLES_PER_S, 1),
            new CeilingItem("S1/t8", Metric.CYCLES_PER_S, 50),
            new CeilingItem("S1/t64", Metric.CYCLES_PER_S, 50),
            new CeilingItem("S1/t1", Metric.CYCLE_P50_US, 0),
            new CeilingItem("S3/w1", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w8", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w1c", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w1c5", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w1cr", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w8c", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w1j", Metric.HANDOFF_P50_US, 0));

    /** The S0 test whose numbers are the ceiling. */
    static final String CEILING_TEST = "EVALSHA lock";

    private final Options options;
    private final Environment environment;
    private final List<Run> runs;
    private final List<S0Ceiling.Row> ceiling;
    private final String ceilingNote;
    private final double elapsedSeconds;

    Report(Options options, Environment environment, List<Run> runs, List<S0Ceiling.Row> ceiling, String ceilingNote,
            double elapsedSeconds) {
        this.options = options;
        this.environment = environment;
        this.runs = List.copyOf(runs);
        this.ceiling = List.copyOf(ceiling);
        this.ceilingNote = ceilingNote;
        this.elapsedSeconds = elapsedSeconds;
    }

    List<String> caseIds() {
        Set<String> ids = new LinkedHashSet<>();
        runs.forEach(run -> ids.add(run.caseId()));
        return List.copyOf(ids);
    }

    /** The case's title as a worker gave it (a case not run for a library has only its id). */
    String title(String caseId) {
        return runs.stream().filter(run -> run.caseId().equals(caseId) && run.position() != Run.NOT_RUN)
                .map(run -> (String) run.result().get("title")).findFirst().orElse(caseId);
    }

    private List<Run> runsOf(String caseId, Library library) {
        return runs.stream().filter(run -> run.caseId().equals(caseId) && run.library() == library).toList();
    }

    Values values(String caseId, Library library, Metric metric) {
        List<Double> byRepeat = new ArrayList<>(Collections.nCopies(options.repeats(), (Double) null));
        for (Run run : runsOf(caseId, library)) {
            Object value = run.metrics().get(metric.key());
            if (value != null && run.repeat() < byRepeat.size()) {
                byRepeat.set(run.repeat(), ((Number) value).doubleValue());
            }
        }
        return new Values(byRepeat);
    }

    String unavailable(String caseId, Library library) {
        return runsOf(caseId, library).stream().map(Run::unavailable).filter(why -> why != null).findFirst().orElse(null);
    }

    /**
     * The peer whose median of {@code metric} in {@code caseId} is the better one, or null when
     * no peer measured it or the metric has no better direction.
     */
    Library bestPeer(String caseId, Metric metric) {
        // A mixed fleet's libraries share one run: neither is measured against the other.
        if (metric.better() == Metric.Better.NEITHER || S6MixedFleet.isMixed(caseId)) {
            return null;
        }
        Library best = null;
        double bestValue = Double.NaN;
        for (Library peer : Library.peers()) {
            double value = values(caseId, peer, metric).median();
            if (Double.isFinite(value) && (best == null
                    || (metric.better() == Metric.Better.HIGHER ? value > bestValue : value < bestValue))) {
                best = peer;
                bestValue = value;
            }
        }
        return best;
    }

    /** Relock's median over {@code peer}'s; NaN if either is missing. */
    double ratio(String caseId, Metric metric, Library peer) {
        if (peer == null) {
            return Double.NaN;
        }
        return values(caseId, Library.RELOCK, metric).median() / values(caseId, peer, metric).median();
    }

    /** Per repeat: Relock's value over {@code peer}'s, where both exist. */
    List<Double> pairRatios(String caseId, Metric metric, Library peer) {
        List<Double> ratios = new ArrayList<>();
        if (peer == null) {
            return ratios;
        }
        List<Double> relock = values(caseId, Library.RELOCK, metric).byRepeat();
        List<Double> other = values(caseId, peer, metric).byRepeat();
        for (int i = 0; i < relock.size(); i++) {
            if (relock.get(i) != null && other.get(i) != null && other.get(i) != 0) {
                ratios.add(relock.get(i) / other.get(i));
            }
        }
        return ratios;
    }

    /** The median over the repeats of S0's EVALSHA rate (requests/s) with {@code connections}; NaN if not run. */
    double ceilingRate(int connections) {
        return median(ceilingRowsOf(connections).stream().map(S0Ceiling.Row::requestsPerSecond).toList());
    }

    /** One EVALSHA round trip: the median over the repeats of S0's p50 with one connection, in µs; NaN if not run. */
    double roundTripMicros() {
        return median(ceilingRowsOf(1).stream().map(S0Ceiling.Row::p50Millis).toList()) * 1e3;
    }

    /** The median over the repeats of a JVM floor test's p50 (see {@link JvmFloor}), in µs; NaN if not run. */
    double floorMicros(String test) {
        return median(ceiling.stream().filter(row -> row.test().equals(test)).map(S0Ceiling.Row::p50Millis).toList())
                * 1e3;
    }

    /**
     * The JVM floor of a latency metric, in µs: two bare round trips for a cycle, the bare
     * publish-to-woken-thread for a hand-off; NaN for other metrics or when not measured.
     */
    double floorOf(Metric metric) {
        return switch (metric) {
            case CYCLE_P50_US -> 2 * floorMicros(JvmFloor.ROUND_TRIP);
            case HANDOFF_P50_US -> floorMicros(JvmFloor.HAND_OFF);
            default -> Double.NaN;
        };
    }

    private List<S0Ceiling.Row> ceilingRowsOf(int connections) {
        return ceiling.stream().filter(row -> row.test().equals(CEILING_TEST) && row.connections() == connections)
                .toList();
    }

    /** Relock's or a peer's median against the ceiling: a share of the rate ceiling, or round trips. */
    double againstCeiling(CeilingItem item, Library library) {
        double value = values(item.caseId(), library, item.metric()).median();
        return item.isRate() ? value / (ceilingRate(item.connections()) / 2) : value / roundTripMicros();
    }

    /** Whom {@code goal} compares Relock with in this run; null if not a ratio goal or no peer measured it. */
    Library baseline(Goal goal) {
        if (!goal.isRatio()) {
            return null;
        }
        return goal.baseline() == Goal.Baseline.REDISSON ? Library.REDISSON : bestPeer(goal.caseId(), goal.metric());
    }

    /**
     * The goal's measured value: the ratio for ratio goals, the worst repeat's ratio for
     * every-repeat goals, Relock's median over the goal's EVALSHA round trips for round-trip
     * goals, over the JVM floor for floor goals, Relock's median otherwise; NaN if not measured.
     */
    double measured(Goal goal) {
        double relock = values(goal.caseId(), Library.RELOCK, goal.metric()).median();
        return switch (goal.kind()) {
            case RATIO_AT_LEAST, RATIO_AT_MOST -> ratio(goal.caseId(), goal.metric(), baseline(goal));
            case RATIO_EVERY_REPEAT_AT_MOST -> worstRepeat(goal, repeatRatios(goal.caseId(), goal.metric()));
            case ROUND_TRIPS_AT_MOST -> relock / (goal.roundTrips() * roundTripMicros());
            case FLOOR_AT_MOST -> relock / floorOf(goal.metric());
            case AT_MOST, EQUALS -> relock;
            case FLEET_AT_MOST, FLEET_FACTOR_WITHIN -> fleetWorst(goal);
        };
    }

    /**
     * A ratio per repeat: Relock's value in repeat i over the better peer's value in repeat i
     * (each repeat's own best peer, which may differ from the medians'); null where Relock or
     * every peer has no value in that repeat, or the metric has no better direction.
     */
    List<RepeatRatio> repeatRatios(String caseId, Metric metric) {
        List<RepeatRatio> ratios = new ArrayList<>();
        List<Double> relock = values(caseId, Library.RELOCK, metric).byRepeat();
        for (int i = 0; i < relock.size(); i++) {
            Library best = null;
            double bestValue = Double.NaN;
            if (metric.better() != Metric.Better.NEITHER) {
                for (Library peer : Library.peers()) {
                    Double value = values(caseId, peer, metric).byRepeat().get(i);
                    if (value != null && value > 0 && (best == null
                            || (metric.better() == Metric.Better.HIGHER ? value > bestValue : value < bestValue))) {
                        best = peer;
                        bestValue = value;
                    }
                }
            }
            ratios.add(relock.get(i) == null || best == null ? null : new RepeatRatio(i, best, relock.get(i) / bestValue));
        }
        return ratios;
    }

    /** Relock over the better peer in one repeat ({@link #repeatRatios}). */
    record RepeatRatio(int repeat, Library peer, double ratio) {}

    /**
     * The worst of {@code ratios} for {@code goal} (the largest for an at-most goal); NaN unless
     * every repeat has one, so that an every-repeat goal never holds on fewer repeats than ran.
     */
    static double worstRepeat(Goal goal, List<RepeatRatio> ratios) {
        if (ratios.isEmpty() || ratios.contains(null)) {
            return Double.NaN;
        }
        double worst = Double.NEGATIVE_INFINITY;
        for (RepeatRatio ratio : ratios) {
            worst = Math.max(worst, ratio.ratio());
        }
        return worst;
    }

    /**
     * A fleet goal's worst reading over both libraries and every repeat: the largest value, or
     * for a factor goal the largest factor away from 1 (0.5 and 2 are both 2; a share of 0 is
     * {@link Double#MAX_VALUE}); NaN unless every library of the fleet measured it in every repeat.
     */
    double fleetWorst(Goal goal) {
        double worst = Double.NEGATIVE_INFINITY;
        for (Library library : S6MixedFleet.FLEET) {
            Values values = values(goal.caseId(), library, goal.metric());
            if (values.present().size() < options.repeats()) {
                return Double.NaN;
            }
            for (double value : values.present()) {
                double reading = goal.kind() != Goal.Kind.FLEET_FACTOR_WITHIN ? value
                        : value > 0 ? Math.max(value, 1 / value) : Double.MAX_VALUE;
                worst = Math.max(worst, reading);
            }
        }
        return worst;
    }

    List<Metric> metricsOf(String caseId) {
        List<Metric> present = new ArrayList<>();
        for (Metric metric : Metric.values()) {
            if (Arrays.stream(Library.values()).anyMatch(library -> !values(caseId, library, metric).isEmpty())) {
                present.add(metric);
            }
        }
        return present;
    }

    List<Run> errors() {
        return runs.stream().filter(run -> run.error() != null).toList();
    }

    /** Runs whose critical-section checks are not all zero. */
    List<Run> dirty() {
        return runs.stream().filter(run -> run.checks().values().stream()
                .anyMatch(value -> ((Number) value).longValue() != 0)).toList();
    }

    List<Bar> bars() {
        List<Bar> bars = new ArrayList<>();
        for (ChartItem item : CHART) {
            Library peer = bestPeer(item.caseId(), item.metric());
            double relock = values(item.caseId(), Library.RELOCK, item.metric()).median();
            double best = peer == null ? Double.NaN : values(item.caseId(), peer, item.metric()).median();
            if (!(relock > 0) || !(best > 0)) {
                continue;
            }
            boolean lower = item.metric().better() == Metric.Better.LOWER;
            double goal = Double.NaN;
            for (Goal candidate : Goal.ALL) {
                if (candidate.caseId().equals(item.caseId()) && candidate.metric() == item.metric()) {
                    Library baseline = baseline(candidate);
                    double required = candidate.required(
                            baseline == null ? Double.NaN : values(item.caseId(), baseline, item.metric()).median(),
                            roundTripMicros(), floorOf(item.metric()));
                    double advantage = lower ? best / required : required / best;
                    // Where goals overlap (issue 5 against Redisson, issue 12 against the best
                    // peer), the strictest one is the mark.
                    if (Double.isFinite(advantage) && !(advantage <= goal)) {
                        goal = advantage;
                    }
                }
            }
            bars.add(new Bar(item.label() + " (vs " + peer.shortName() + ")", lower ? best / relock : relock / best,
                    goal));
        }
        return bars;
    }

    /** What S1/t64m measures beside S1/t64, both Relock: the metrics' cost. */
    static final List<Metric> METERED_METRICS = List.of(Metric.CYCLES_PER_S, Metric.CYCLE_P50_US,
            Metric.JVM_CPU_US_PER_OP);

    /** Per repeat: Relock's {@code metric} in S1/t64m over S1/t64 (the same worker JVM). */
    List<Double> meteredRatios(Metric metric) {
        List<Double> metered = values(S1Uncontended.METERED_CASE, Library.RELOCK, metric).byRepeat();
        List<Double> plain = values(S1Uncontended.PLAIN_CASE, Library.RELOCK, metric).byRepeat();
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < metered.size(); i++) {
            if (metered.get(i) != null && plain.get(i) != null && plain.get(i) != 0) {
                ratios.add(metered.get(i) / plain.get(i));
            }
        }
        return ratios;
    }

    /** The whole report as printed to stdout. */
    String text() {
        return new ReportText(this).text();
    }

    /** {@code latest.md}: what docs/performance.md summarises and links to. */
    String markdown(String chartPath, String runDirectory) {
        return new ReportMarkdown(this).markdown(chartPath, runDirectory);
    }

    /** {@code results.json}: every raw result and every reading of it. */
    Map<String, Object> json() {
        return new ReportJson(this).json();
    }

    Options options() {
        return options;
    }

    Environment environment() {
        return environment;
    }

    List<Run> runs() {
        return runs;
    }

    List<S0Ceiling.Row> ceiling() {
        return ceiling;
    }

    String ceilingNote() {
        return ceilingNote;
    }

    double elapsedSeconds() {
        return elapsedSeconds;
    }

    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}
