package io.relock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Everything one bench run measured, and its readings: the text table printed at the end, the
 * Markdown for {@code latest.md}, {@code results.json}, the goals and the chart's bars.
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
            new ChartItem("S1/t1", Metric.ROUND_TRIPS_PER_OP, "S1 round trips/cycle"),
            new ChartItem("S1/t1", Metric.COMMANDS_PER_OP, "S1 commands/cycle"),
            new ChartItem("S2/t8x4", Metric.ACQUISITIONS_PER_S, "S2 4×8 acq/s"),
            new ChartItem("S2/t8x4", Metric.COMMANDS_PER_OP, "S2 4×8 commands/acq"),
            new ChartItem("S3/w1", Metric.HANDOFF_P50_US, "S3 1 waiter same client p50"),
            new ChartItem("S3/w8", Metric.HANDOFF_P50_US, "S3 8 waiters same client p50"),
            new ChartItem("S3/w1c", Metric.HANDOFF_P50_US, "S3 1 waiter other client p50"),
            new ChartItem("S3/w8c", Metric.HANDOFF_P50_US, "S3 8 waiters 8 clients p50"),
            new ChartItem("S3/w1j", Metric.HANDOFF_P50_US, "S3 1 waiter other JVM p50"),
            new ChartItem("S4/fair10", Metric.ACQUISITIONS_PER_S, "S4 fair 10 waiters acq/s"),
            new ChartItem("S4/redlock", Metric.CYCLES_PER_S, "S4 RedLock cycles/s"),
            new ChartItem("S5/footprint", Metric.THREADS, "S5 threads/client"),
            new ChartItem("S5/footprint", Metric.CONNECTIONS, "S5 connections/client"),
            new ChartItem("S5/watchdog", Metric.WATCHDOG_CALLS_PER_TICK, "S5 renewal calls/tick"));

    /**
     * A reading against the ceiling: a rate as a share of half the EVALSHA rate with
     * {@code connections} connections, or (connections 0) a latency in EVALSHA round trips.
     */
    private record CeilingItem(String caseId, Metric metric, int connections) {

        boolean isRate() {
            return connections > 0;
        }
    }

    private static final List<CeilingItem> CEILING_ITEMS = List.of(
            new CeilingItem("S1/t1", Metric.CYCLES_PER_S, 1),
            new CeilingItem("S1/t8", Metric.CYCLES_PER_S, 50),
            new CeilingItem("S1/t64", Metric.CYCLES_PER_S, 50),
            new CeilingItem("S1/t1", Metric.CYCLE_P50_US, 0),
            new CeilingItem("S3/w1", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w8", Metric.HANDOFF_P50_US, 0),
            new CeilingItem("S3/w1c", Metric.HANDOFF_P50_US, 0),
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

    // ---- readings ------------------------------------------------------------------------------

    List<String> caseIds() {
        Set<String> ids = new LinkedHashSet<>();
        runs.forEach(run -> ids.add(run.caseId()));
        return List.copyOf(ids);
    }

    /** The case's title as a worker gave it (a case not run for a library has only its id). */
    private String title(String caseId) {
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

    private String unavailable(String caseId, Library library) {
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

    private static final String FLOOR_TEXT = "Against the JVM floor: latencies over what a bare Lettuce client takes "
            + "for the same shape on this machine (S0, no lock library): two synchronous EVALSHA round trips for a "
            + "cycle, a published message waking a blocked thread of another connection for a hand-off";

    /** Per latency item: the JVM floor, then each library's median over it. */
    private List<String[]> floorComparisonRows() {
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("case", "against", "floor"));
        for (Library library : Library.values()) {
            header.add(library.displayName());
        }
        rows.add(header.toArray(String[]::new));
        for (CeilingItem item : CEILING_ITEMS) {
            double floor = floorOf(item.metric());
            if (item.isRate() || !Double.isFinite(floor) || !caseIds().contains(item.caseId())) {
                continue;
            }
            List<String> row = new ArrayList<>();
            row.add(title(item.caseId()) + " [" + item.caseId() + "]");
            row.add(item.metric().label() + (item.metric() == Metric.CYCLE_P50_US ? " ÷ 2 JVM round trips"
                    : " ÷ JVM publish → woken thread"));
            row.add(item.metric().format(floor) + " µs");
            for (Library library : Library.values()) {
                double value = values(item.caseId(), library, item.metric()).median() / floor;
                row.add(Double.isFinite(value) ? times(value) : "–");
            }
            rows.add(row.toArray(String[]::new));
        }
        return rows;
    }

    private List<S0Ceiling.Row> ceilingRowsOf(int connections) {
        return ceiling.stream().filter(row -> row.test().equals(CEILING_TEST) && row.connections() == connections)
                .toList();
    }

    /** Relock's or a peer's median against the ceiling: a share of the rate ceiling, or round trips. */
    private double againstCeiling(CeilingItem item, Library library) {
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
     * The goal's measured value: the ratio for ratio goals, Relock's median over the goal's
     * EVALSHA round trips for round-trip goals, Relock's median otherwise; NaN if not measured.
     */
    double measured(Goal goal) {
        double relock = values(goal.caseId(), Library.RELOCK, goal.metric()).median();
        return switch (goal.kind()) {
            case RATIO_AT_LEAST, RATIO_AT_MOST -> ratio(goal.caseId(), goal.metric(), baseline(goal));
            case ROUND_TRIPS_AT_MOST -> relock / (goal.roundTrips() * roundTripMicros());
            case AT_MOST, EQUALS -> relock;
            case FLEET_AT_MOST, FLEET_FACTOR_WITHIN -> fleetWorst(goal);
        };
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

    private List<Metric> metricsOf(String caseId) {
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
                            roundTripMicros());
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

    // ---- text ----------------------------------------------------------------------------------

    /** The whole report as printed to stdout. */
    String text() {
        StringBuilder out = new StringBuilder();
        out.append("Relock bench, ").append(environment.dateText()).append('\n');
        out.append("  machine:  ").append(environment.machineText()).append('\n');
        out.append("  versions: ").append(environment.versionsText()).append('\n');
        out.append("  method:   ").append(methodText()).append("\n\n");

        if (options.scenarios().contains("S0")) {
            out.append("S0 ceiling: redis-benchmark, and a bare Lettuce client (the JVM floor), against the same "
                    + "redis-server (no lock library)\n");
            if (ceiling.isEmpty()) {
                out.append("  ").append(ceilingNote).append('\n');
            } else {
                for (String[] row : ceilingRows()) {
                    out.append(String.format(Locale.ROOT, "  %-38s %-14s %-24s %s%n", (Object[]) row));
                }
            }
            out.append('\n');
        }

        out.append(columns(tableRows(), 2)).append('\n');
        List<String[]> againstCeiling = ceilingComparisonRows();
        if (againstCeiling.size() > 1) {
            out.append("Against the ceiling: rates as a share of half S0's EVALSHA rate (a cycle is two script calls), "
                    + "latencies in EVALSHA round trips (S0's p50, one connection)\n");
            out.append(columns(againstCeiling, 2)).append('\n');
        }
        List<String[]> againstFloor = floorComparisonRows();
        if (againstFloor.size() > 1) {
            out.append(FLOOR_TEXT).append('\n');
            out.append(columns(againstFloor, 2)).append('\n');
        }
        out.append(goalsText());
        out.append('\n').append(correctnessText()).append('\n');
        String metered = meteredText();
        if (metered != null) {
            out.append('\n').append(metered).append('\n');
        }
        for (Run run : errors()) {
            out.append("\nERROR in ").append(run.caseId()).append(", ").append(run.library().displayName())
                    .append(", repeat ").append(run.repeat() + 1).append(":\n").append(run.error().strip()).append('\n');
        }
        return out.toString();
    }

    private String methodText() {
        Load.Timing mixed = new S6MixedFleet().timing("S6/r4x2-s2x1", options.timing());
        return "each case in a fresh JVM per library (same flags), " + options.repeats() + " repeats alternating "
                + "the order of the libraries; " + seconds(options.window()) + " window after " + seconds(options.warmup())
                + " warm-up (S3: " + seconds(S3HandOff.shorter(options.timing()).window())
                + " after " + seconds(S3HandOff.shorter(options.timing()).warmup()) + "; S6's mixed fleet: both "
                + "libraries' clients in one JVM, " + seconds(mixed.window()) + " after " + seconds(mixed.warmup())
                + "); values are medians "
                + "(min–max over repeats); Relock/best peer is Relock's median over the better peer median";
    }

    /** Rows as aligned text columns, those from {@code rightFrom} on aligned right. */
    private static String columns(List<String[]> rows, int rightFrom) {
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].codePointCount(0, row[i].length()));
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(pad(row[i], widths[i], i >= rightFrom)).append(i < row.length - 1 ? "  " : "");
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    /** Rows as a Markdown table, those from {@code rightFrom} on aligned right. */
    private static String markdownTable(List<String[]> rows, int rightFrom) {
        StringBuilder out = new StringBuilder("| ").append(String.join(" | ", rows.get(0))).append(" |\n|");
        for (int i = 0; i < rows.get(0).length; i++) {
            out.append(i >= rightFrom ? "---:|" : "---|");
        }
        out.append('\n');
        for (String[] row : rows.subList(1, rows.size())) {
            out.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return out.toString();
    }

    private static String seconds(java.time.Duration duration) {
        double value = duration.toMillis() / 1000.0;
        return (value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value)) + " s";
    }

    private List<String[]> ceilingRows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"test", "connections", "requests/s", "p50 / p99 ms"});
        Set<String> keys = new LinkedHashSet<>();
        ceiling.forEach(row -> keys.add(row.test() + "|" + row.connections()));
        for (String key : keys) {
            List<S0Ceiling.Row> of = ceiling.stream().filter(row -> (row.test() + "|" + row.connections()).equals(key))
                    .toList();
            Values rps = new Values(of.stream().map(S0Ceiling.Row::requestsPerSecond).toList());
            double p50 = median(of.stream().map(S0Ceiling.Row::p50Millis).toList());
            double p99 = median(of.stream().map(S0Ceiling.Row::p99Millis).toList());
            boolean jvm = of.get(0).test().startsWith("JVM");
            rows.add(new String[] {of.get(0).test(), (jvm ? "" : "-c ") + of.get(0).connections(),
                    spread(Metric.CYCLES_PER_S, rps), String.format(Locale.ROOT, "%.3f / %.3f", p50, p99)});
        }
        return rows;
    }

    private List<String[]> tableRows() {
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("case", "metric"));
        for (Library library : Library.values()) {
            header.add(library.displayName());
        }
        header.add("best peer");
        header.add("Relock/best peer");
        rows.add(header.toArray(String[]::new));
        for (String caseId : caseIds()) {
            String title = title(caseId) + " [" + caseId + "]";
            List<Metric> metrics = metricsOf(caseId);
            if (metrics.isEmpty()) {
                List<String> row = new ArrayList<>(List.of(title, ""));
                for (Library library : Library.values()) {
                    row.add(S6MixedFleet.isMixed(caseId) && !S6MixedFleet.FLEET.contains(library) ? "—"
                            : unavailable(caseId, library) != null ? "not available" : "no result");
                }
                row.add("");
                row.add("");
                rows.add(row.toArray(String[]::new));
                continue;
            }
            boolean first = true;
            for (Metric metric : metrics) {
                List<String> row = new ArrayList<>(List.of(first ? title : "", metric.label()));
                for (Library library : Library.values()) {
                    row.add(S6MixedFleet.isMixed(caseId) && !S6MixedFleet.FLEET.contains(library) ? "—"
                            : unavailable(caseId, library) != null ? "not available"
                            : spread(metric, values(caseId, library, metric)));
                }
                Library peer = bestPeer(caseId, metric);
                String ratio = ratioText(caseId, metric, peer);
                row.add(ratio.isEmpty() ? "" : peer.displayName());
                row.add(ratio);
                rows.add(row.toArray(String[]::new));
                first = false;
            }
        }
        return rows;
    }

    /** Per ceiling item: the ceiling, then each library's median against it. */
    private List<String[]> ceilingComparisonRows() {
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("case", "against", "ceiling"));
        for (Library library : Library.values()) {
            header.add(library.displayName());
        }
        rows.add(header.toArray(String[]::new));
        for (CeilingItem item : CEILING_ITEMS) {
            double ceilingValue = item.isRate() ? ceilingRate(item.connections()) / 2 : roundTripMicros();
            if (!Double.isFinite(ceilingValue) || !caseIds().contains(item.caseId())) {
                continue;
            }
            List<String> row = new ArrayList<>();
            row.add(title(item.caseId()) + " [" + item.caseId() + "]");
            row.add(item.isRate() ? item.metric().label() + " ÷ (EVALSHA -c " + item.connections() + " rate / 2)"
                    : item.metric().label() + " ÷ EVALSHA p50");
            row.add(item.isRate() ? Metric.CYCLES_PER_S.format(ceilingValue) + "/s"
                    : Metric.HANDOFF_P50_US.format(ceilingValue) + " µs");
            for (Library library : Library.values()) {
                double value = againstCeiling(item, library);
                row.add(!Double.isFinite(value) ? "–" : item.isRate() ? times(value)
                        : String.format(Locale.ROOT, "%.1f RT", value));
            }
            rows.add(row.toArray(String[]::new));
        }
        return rows;
    }

    private String spread(Metric metric, Values values) {
        if (values.isEmpty()) {
            return "–";
        }
        String median = metric.format(values.median());
        String min = metric.format(values.min());
        String max = metric.format(values.max());
        return min.equals(max) && values.present().size() > 1 ? median + " (all)"
                : values.present().size() > 1 ? median + " (" + min + "–" + max + ")" : median;
    }

    private String ratioText(String caseId, Metric metric, Library peer) {
        double ratio = ratio(caseId, metric, peer);
        if (!Double.isFinite(ratio)) {
            return "";
        }
        List<Double> pairs = pairRatios(caseId, metric, peer);
        String text = times(ratio);
        if (pairs.size() > 1) {
            text += " (" + times(Collections.min(pairs)) + "–" + times(Collections.max(pairs)) + ")";
        }
        return text;
    }

    private static String times(double ratio) {
        return String.format(Locale.ROOT, ratio >= 10 ? "%.1f×" : "%.2f×", ratio);
    }

    private String goalsText() {
        StringBuilder out = new StringBuilder("Goals (issues 5, 12 and 21), from this run's medians (issue 21's mixed "
                + "fleet: both libraries, every repeat); ✓ holds, ✗ misses, ? not measured in this run; "
                + "RT = one EVALSHA round trip (S0 p50, one connection)\n");
        List<String[]> rows = new ArrayList<>();
        for (String[] row : goalRows()) {
            rows.add(new String[] {"  " + row[0], "#" + row[1], row[2], row[3], row[4]});
        }
        out.append(columns(rows, 5));
        return out.toString();
    }

    private List<String[]> goalRows() {
        List<String[]> rows = new ArrayList<>();
        for (Goal goal : Goal.ALL) {
            double value = measured(goal);
            String mark = Double.isFinite(value) ? (goal.holds(value) ? "✓" : "✗") : "?";
            rows.add(new String[] {mark, goal.issue(), goal.text() + " [" + goal.caseId() + "]", goal.targetText(),
                    measuredText(goal, value)});
        }
        return rows;
    }

    private String measuredText(Goal goal, double value) {
        if (!Double.isFinite(value)) {
            if (!caseIds().contains(goal.caseId())) {
                return "case " + goal.caseId() + " not run";
            }
            if (goal.isFleet()) {
                return "not measured for both libraries in every repeat (see errors)";
            }
            return goal.kind() == Goal.Kind.ROUND_TRIPS_AT_MOST && !Double.isFinite(roundTripMicros())
                    ? "no EVALSHA round trip (S0 not run)" : "no value (see errors)";
        }
        Metric metric = goal.metric();
        double relock = values(goal.caseId(), Library.RELOCK, metric).median();
        switch (goal.kind()) {
            case RATIO_AT_LEAST, RATIO_AT_MOST -> {
                Library baseline = baseline(goal);
                List<Double> pairs = pairRatios(goal.caseId(), metric, baseline);
                String text = times(value) + " " + baseline.displayName() + (pairs.size() > 1
                        ? " (repeats " + times(Collections.min(pairs)) + "–" + times(Collections.max(pairs)) + ")" : "");
                Library best = bestPeer(goal.caseId(), metric);
                if (best != null && best != baseline) {
                    text += "; " + times(ratio(goal.caseId(), metric, best)) + " best peer " + best.displayName();
                }
                return text;
            }
            case FLEET_AT_MOST, FLEET_FACTOR_WITHIN -> {
                List<String> libraries = new ArrayList<>();
                for (Library library : S6MixedFleet.FLEET) {
                    libraries.add(library.displayName() + " " + spread(metric, values(goal.caseId(), library, metric)));
                }
                String worst = goal.kind() == Goal.Kind.FLEET_AT_MOST ? "worst " + metric.format(value)
                        : value == Double.MAX_VALUE ? "a library acquired nothing" : "worst " + times(value) + " from equal";
                return worst + "; " + String.join(", ", libraries);
            }
            case ROUND_TRIPS_AT_MOST -> {
                String count = goal.roundTrips() == 1 ? String.format(Locale.ROOT, "%.2f RT", value)
                        : times(value) + " " + goal.roundTrips() + " RT";
                String text = count + " (Relock " + metric.format(relock) + " µs; 1 RT = "
                        + metric.format(roundTripMicros()) + " µs)";
                double floor = floorOf(metric);
                if (Double.isFinite(floor)) {
                    double floorRoundTrips = floor / (goal.roundTrips() * roundTripMicros());
                    text += "; the JVM floor alone is " + (goal.roundTrips() == 1
                            ? String.format(Locale.ROOT, "%.2f RT", floorRoundTrips)
                            : times(floorRoundTrips) + " " + goal.roundTrips() + " RT") + " (" + metric.format(floor)
                            + " µs), Relock " + times(relock / floor) + " of it";
                }
                return text;
            }
            default -> {
                List<String> peers = new ArrayList<>();
                for (Library peer : Library.peers()) {
                    double other = values(goal.caseId(), peer, metric).median();
                    if (Double.isFinite(other)) {
                        peers.add(peer.displayName() + " " + metric.format(other));
                    }
                }
                return "Relock " + metric.format(value) + (peers.isEmpty() ? "" : " (" + String.join(", ", peers) + ")");
            }
        }
    }

    private String correctnessText() {
        long exclusive = runs.stream().filter(run -> run.checks().containsKey("overlaps")).count();
        long held = runs.stream().filter(run -> run.checks().containsKey("locks_lost")).count();
        if (exclusive + held == 0) {
            return "Correctness: no case with checks ran.";
        }
        List<Run> dirty = dirty();
        if (dirty.isEmpty()) {
            List<String> clean = new ArrayList<>();
            if (exclusive > 0) {
                clean.add("overlapping holders 0 and lost updates 0 in all " + exclusive + " contended runs (S2, S4 fair, S6)");
            }
            if (held > 0) {
                clean.add("no held lock lost in " + held + " watchdog runs (S5)");
            }
            return "Correctness ✓: " + String.join("; ", clean) + ".";
        }
        StringBuilder out = new StringBuilder("Correctness ✗:\n");
        for (Run run : dirty) {
            out.append("  ").append(run.caseId()).append(' ').append(run.library().displayName()).append(" repeat ")
                    .append(run.repeat() + 1).append(": ").append(run.checks()).append('\n');
        }
        return out.toString().stripTrailing();
    }

    /** What S1/t64m measures beside S1/t64, both Relock: the metrics' cost. */
    private static final List<Metric> METERED_METRICS = List.of(Metric.CYCLES_PER_S, Metric.CYCLE_P50_US,
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

    /** Relock with RelockMetrics against plain Relock, or null when the run lacks either case. */
    String meteredText() {
        if (values(S1Uncontended.METERED_CASE, Library.RELOCK, Metric.CYCLES_PER_S).isEmpty()
                || values(S1Uncontended.PLAIN_CASE, Library.RELOCK, Metric.CYCLES_PER_S).isEmpty()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (Metric metric : METERED_METRICS) {
            Values metered = values(S1Uncontended.METERED_CASE, Library.RELOCK, metric);
            Values plain = values(S1Uncontended.PLAIN_CASE, Library.RELOCK, metric);
            if (metered.isEmpty() || plain.isEmpty()) {
                continue;
            }
            List<Double> pairs = meteredRatios(metric);
            parts.add(metric.label() + " " + metric.format(metered.median()) + " vs " + metric.format(plain.median())
                    + " = " + times(metered.median() / plain.median())
                    + (pairs.size() > 1 ? " (repeats " + times(Collections.min(pairs)) + "–" + times(Collections.max(pairs))
                            + ")" : ""));
        }
        return "Metrics cost: Relock + RelockMetrics (SimpleMeterRegistry) vs plain Relock, 64 threads ["
                + S1Uncontended.METERED_CASE + " vs " + S1Uncontended.PLAIN_CASE + "]: " + String.join("; ", parts) + ".";
    }

    private Map<String, Object> meteredJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        for (Metric metric : METERED_METRICS) {
            Values metered = values(S1Uncontended.METERED_CASE, Library.RELOCK, metric);
            Values plain = values(S1Uncontended.PLAIN_CASE, Library.RELOCK, metric);
            if (metered.isEmpty() || plain.isEmpty()) {
                continue;
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("metered", metered.median());
            entry.put("plain", plain.median());
            entry.put("ratio", metered.median() / plain.median());
            entry.put("pair_ratios", meteredRatios(metric));
            json.put(metric.key(), entry);
        }
        return json;
    }

    private static String pad(String text, int width, boolean right) {
        int length = text.codePointCount(0, text.length());
        String padding = " ".repeat(Math.max(0, width - length));
        return right ? padding + text : text + padding;
    }

    // ---- Markdown and JSON ---------------------------------------------------------------------

    /** {@code latest.md}: what the README's Performance section shows. */
    String markdown(String chartPath, String runDirectory) {
        StringBuilder out = new StringBuilder();
        out.append("# Relock vs Redisson and RedisLockRegistry: latest bench run\n\n");
        out.append("Run ").append(environment.dateText()).append(" with `").append(environment.command())
                .append("` (").append(String.format(Locale.ROOT, "%.1f", elapsedSeconds / 60)).append(" min); files in `")
                .append(runDirectory).append("/`.\n\n");
        out.append("- **Machine**: ").append(environment.machineText()).append('\n');
        out.append("- **Versions**: ").append(environment.versionsText()).append('\n');
        out.append("- **Method**: ").append(methodText()).append(". Every library with its defaults (the registry "
                + "with PUB_SUB_LOCK), on one redis-server started by the bench. See `relock-bench/README.md`.\n\n");
        out.append("![Relock's advantage over the best peer per metric](").append(chartPath).append(")\n\n");
        out.append("## Goals\n\nRT = one EVALSHA round trip of the lock script (S0's p50 with one connection, this run).\n\n");
        out.append(markdownTable(withHeader(new String[] {"", "issue", "goal", "target", "measured"}, goalRows()), 5));
        out.append('\n').append(correctnessText().replace("\n", "\n\n")).append("\n\n");
        String metered = meteredText();
        if (metered != null) {
            out.append(metered).append("\n\n");
        }
        out.append("## Results\n\n");
        out.append(markdownTable(tableRows(), 2));
        List<String[]> againstCeiling = ceilingComparisonRows();
        if (againstCeiling.size() > 1) {
            out.append("\n## Against the ceiling\n\nRates as a share of half S0's EVALSHA rate (a cycle is two script "
                    + "calls); latencies in EVALSHA round trips (RT: S0's p50 with one connection).\n\n");
            out.append(markdownTable(againstCeiling, 2));
        }
        List<String[]> againstFloor = floorComparisonRows();
        if (againstFloor.size() > 1) {
            out.append("\n## Against the JVM floor\n\n").append(FLOOR_TEXT).append(".\n\n");
            out.append(markdownTable(againstFloor, 2));
        }
        if (options.scenarios().contains("S0")) {
            out.append("\n## S0 ceiling (redis-benchmark and a bare Lettuce client, same server, no lock library)\n\n");
            if (ceiling.isEmpty()) {
                out.append(ceilingNote).append('\n');
            } else {
                out.append(markdownTable(ceilingRows(), 2));
            }
        }
        if (!errors().isEmpty()) {
            out.append("\n## Errors\n\n");
            for (Run run : errors()) {
                out.append("- ").append(run.caseId()).append(", ").append(run.library().displayName()).append(", repeat ")
                        .append(run.repeat() + 1).append(": `").append(run.error().strip().split("\n")[0]).append("`\n");
            }
        }
        return out.toString();
    }

    private static List<String[]> withHeader(String[] header, List<String[]> rows) {
        List<String[]> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        return all;
    }

    /** {@code results.json}: every raw result and every reading of it. */
    Map<String, Object> json() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("date", environment.start().toOffsetDateTime().toString());
        json.put("command", environment.command());
        json.put("elapsed_s", elapsedSeconds);
        json.put("machine", environment.machine());
        json.put("versions", environment.versions());
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("window_ms", options.window().toMillis());
        settings.put("warmup_ms", options.warmup().toMillis());
        settings.put("count_ms", options.count().toMillis());
        settings.put("repeats", options.repeats());
        settings.put("scenarios", List.copyOf(options.scenarios()));
        settings.put("cases", List.copyOf(options.cases()));
        settings.put("quick", options.quick());
        settings.put("worker_heap", options.heap());
        json.put("options", settings);

        Map<String, Object> s0 = new LinkedHashMap<>();
        s0.put("note", ceilingNote);
        s0.put("rows", ceiling.stream().map(S0Ceiling.Row::toJson).toList());
        json.put("ceiling", s0);

        List<Object> goals = new ArrayList<>();
        for (Goal goal : Goal.ALL) {
            Map<String, Object> entry = new LinkedHashMap<>();
            double value = measured(goal);
            entry.put("goal", goal.text());
            entry.put("issue", goal.issue());
            entry.put("case", goal.caseId());
            entry.put("metric", goal.metric().key());
            entry.put("target", goal.targetText());
            Library baseline = baseline(goal);
            entry.put("baseline", baseline == null ? null : baseline.id());
            entry.put("measured", value);
            for (Library library : Library.values()) {
                entry.put(library.id(), values(goal.caseId(), library, goal.metric()).median());
            }
            entry.put("holds", Double.isFinite(value) ? goal.holds(value) : null);
            goals.add(entry);
        }
        json.put("goals", goals);

        List<Object> againstCeiling = new ArrayList<>();
        for (CeilingItem item : CEILING_ITEMS) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("case", item.caseId());
            entry.put("metric", item.metric().key());
            entry.put("ceiling", item.isRate() ? "evalsha_rate_c" + item.connections() + "_half" : "evalsha_p50_c1_us");
            entry.put("ceiling_value", item.isRate() ? ceilingRate(item.connections()) / 2 : roundTripMicros());
            for (Library library : Library.values()) {
                entry.put(library.id(), againstCeiling(item, library));
            }
            againstCeiling.add(entry);
        }
        json.put("against_ceiling", againstCeiling);

        List<Object> summary = new ArrayList<>();
        for (String caseId : caseIds()) {
            for (Metric metric : metricsOf(caseId)) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("case", caseId);
                entry.put("title", title(caseId));
                entry.put("metric", metric.key());
                entry.put("label", metric.label());
                entry.put("better", metric.better().name().toLowerCase(Locale.ROOT));
                for (Library library : Library.values()) {
                    entry.put(library.id(), values(caseId, library, metric).toJson());
                }
                Library best = bestPeer(caseId, metric);
                entry.put("best_peer", best == null ? null : best.id());
                entry.put("ratio", ratio(caseId, metric, best));
                entry.put("pair_ratios", pairRatios(caseId, metric, best));
                entry.put("ratio_redisson", ratio(caseId, metric, Library.REDISSON));
                summary.add(entry);
            }
        }
        json.put("summary", summary);
        json.put("metered_vs_plain", meteredJson());
        json.put("correct", dirty().isEmpty());
        json.put("runs", runs.stream().map(Run::toJson).toList());
        return json;
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
