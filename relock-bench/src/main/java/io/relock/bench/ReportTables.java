package io.relock.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The tables of a {@link Report} as rows of cells, shared by its text and its Markdown — the
 * results, the S0 ceiling, the comparisons with the ceiling and the JVM floor, the correctness
 * and metrics-cost lines — and the layout of rows as aligned text or a Markdown table.
 */
final class ReportTables {

    static final String FLOOR_TEXT = "Against the JVM floor: latencies over what a bare Lettuce client takes "
            + "for the same shape on this machine (S0, no lock library): two synchronous EVALSHA round trips for a "
            + "cycle, a published message waking a blocked thread of another connection for a hand-off";

    private final Report report;

    ReportTables(Report report) {
        this.report = report;
    }

    /** Per latency item: the JVM floor, then each library's median over it. */
    List<String[]> floorComparisonRows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(header(List.of("case", "against", "floor"), List.of()));
        for (Report.CeilingItem item : Report.CEILING_ITEMS) {
            double floor = report.floorOf(item.metric());
            if (item.isRate() || !Double.isFinite(floor) || !report.caseIds().contains(item.caseId())) {
                continue;
            }
            List<String> row = new ArrayList<>();
            row.add(report.title(item.caseId()) + " [" + item.caseId() + "]");
            row.add(item.metric().label() + (item.metric() == Metric.CYCLE_P50_US ? " ÷ 2 JVM round trips"
                    : " ÷ JVM publish → woken thread"));
            row.add(item.metric().format(floor) + " µs");
            for (Library library : Library.values()) {
                double value = report.values(item.caseId(), library, item.metric()).median() / floor;
                row.add(Double.isFinite(value) ? times(value) : "–");
            }
            rows.add(row.toArray(String[]::new));
        }
        return rows;
    }

    String methodText() {
        Load.Timing mixed = new S6MixedFleet().timing("S6/r4x2-s2x1", report.options().timing());
        Load.Timing s3 = new S3HandOff().timing("S3/w1c", report.options().timing());
        Load.Timing s3LongHolds = new S3HandOff().timing("S3/w1c5", report.options().timing());
        return "each case in a fresh JVM per library (same flags), " + report.options().repeats() + " repeats alternating "
                + "the order of the libraries; " + seconds(report.options().window()) + " window after " + seconds(report.options().warmup())
                + " warm-up (S3: " + seconds(s3.window()) + " after " + seconds(s3.warmup()) + ", "
                + seconds(s3LongHolds.warmup()) + " with 5 ms holds: about "
                + S3HandOff.warmupHandOffs(report.options().timing()) + " hand-offs, for the JIT; S6's mixed fleet: both "
                + "libraries' clients in one JVM, " + seconds(mixed.window()) + " after " + seconds(mixed.warmup())
                + "); values are medians "
                + "(min–max over repeats); Relock/best peer is Relock's median over the better peer median";
    }

    List<String[]> ceilingRows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"test", "connections", "requests/s", "p50 / p99 ms"});
        Set<String> keys = new LinkedHashSet<>();
        report.ceiling().forEach(row -> keys.add(row.test() + "|" + row.connections()));
        for (String key : keys) {
            List<S0Ceiling.Row> of = report.ceiling().stream().filter(row -> (row.test() + "|" + row.connections()).equals(key))
                    .toList();
            Report.Values rps = new Report.Values(of.stream().map(S0Ceiling.Row::requestsPerSecond).toList());
            double p50 = Report.median(of.stream().map(S0Ceiling.Row::p50Millis).toList());
            double p99 = Report.median(of.stream().map(S0Ceiling.Row::p99Millis).toList());
            boolean jvm = of.get(0).test().startsWith("JVM");
            rows.add(new String[] {of.get(0).test(), (jvm ? "" : "-c ") + of.get(0).connections(),
                    spread(Metric.CYCLES_PER_S, rps), String.format(Locale.ROOT, "%.3f / %.3f", p50, p99)});
        }
        return rows;
    }

    List<String[]> tableRows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(header(List.of("case", "metric"), List.of("best peer", "Relock/best peer")));
        for (String caseId : report.caseIds()) {
            String title = report.title(caseId) + " [" + caseId + "]";
            List<Metric> metrics = report.metricsOf(caseId);
            if (metrics.isEmpty()) {
                List<String> row = new ArrayList<>(List.of(title, ""));
                for (Library library : Library.values()) {
                    row.add(S6MixedFleet.isMixed(caseId) && !S6MixedFleet.FLEET.contains(library) ? "—"
                            : report.unavailable(caseId, library) != null ? "not available" : "no result");
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
                            : report.unavailable(caseId, library) != null ? "not available"
                            : spread(metric, report.values(caseId, library, metric)));
                }
                Library peer = report.bestPeer(caseId, metric);
                String ratio = ratioText(caseId, metric, peer);
                row.add(ratio.isEmpty() ? "" : peer.displayName());
                row.add(ratio);
                rows.add(row.toArray(String[]::new));
                first = false;
            }
        }
        return rows;
    }

    /** Per report.ceiling() item: the report.ceiling(), then each library's median against it. */
    List<String[]> ceilingComparisonRows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(header(List.of("case", "against", "ceiling"), List.of()));
        for (Report.CeilingItem item : Report.CEILING_ITEMS) {
            double ceilingValue = item.isRate() ? report.ceilingRate(item.connections()) / 2 : report.roundTripMicros();
            if (!Double.isFinite(ceilingValue) || !report.caseIds().contains(item.caseId())) {
                continue;
            }
            List<String> row = new ArrayList<>();
            row.add(report.title(item.caseId()) + " [" + item.caseId() + "]");
            row.add(item.isRate() ? item.metric().label() + " ÷ (EVALSHA -c " + item.connections() + " rate / 2)"
                    : item.metric().label() + " ÷ EVALSHA p50");
            row.add(item.isRate() ? Metric.CYCLES_PER_S.format(ceilingValue) + "/s"
                    : Metric.HANDOFF_P50_US.format(ceilingValue) + " µs");
            for (Library library : Library.values()) {
                double value = report.againstCeiling(item, library);
                row.add(!Double.isFinite(value) ? "–" : item.isRate() ? times(value)
                        : String.format(Locale.ROOT, "%.1f RT", value));
            }
            rows.add(row.toArray(String[]::new));
        }
        return rows;
    }

    private String ratioText(String caseId, Metric metric, Library peer) {
        double ratio = report.ratio(caseId, metric, peer);
        if (!Double.isFinite(ratio)) {
            return "";
        }
        List<Double> pairs = report.pairRatios(caseId, metric, peer);
        String text = times(ratio);
        if (pairs.size() > 1) {
            text += " (" + times(Collections.min(pairs)) + "–" + times(Collections.max(pairs)) + ")";
        }
        return text;
    }

    String correctnessText() {
        long exclusive = report.runs().stream().filter(run -> run.checks().containsKey("overlaps")).count();
        long held = report.runs().stream().filter(run -> run.checks().containsKey("locks_lost")).count();
        if (exclusive + held == 0) {
            return "Correctness: no case with checks ran.";
        }
        List<Report.Run> dirty = report.dirty();
        if (dirty.isEmpty()) {
            List<String> clean = new ArrayList<>();
            if (exclusive > 0) {
                clean.add("overlapping holders 0 and lost updates 0 in all " + exclusive
                        + " contended runs (S2, S4 fair, S6, S7)");
            }
            if (held > 0) {
                clean.add("no held lock lost in " + held + " watchdog runs (S5)");
            }
            return "Correctness ✓: " + String.join("; ", clean) + ".";
        }
        StringBuilder out = new StringBuilder("Correctness ✗:\n");
        for (Report.Run run : dirty) {
            out.append("  ").append(run.caseId()).append(' ').append(run.library().displayName()).append(" repeat ")
                    .append(run.repeat() + 1).append(": ").append(run.checks()).append('\n');
        }
        return out.toString().stripTrailing();
    }

    /** Relock with RelockMetrics against plain Relock, or null when the run lacks either case. */
    String meteredText() {
        if (report.values(S1Uncontended.METERED_CASE, Library.RELOCK, Metric.CYCLES_PER_S).isEmpty()
                || report.values(S1Uncontended.PLAIN_CASE, Library.RELOCK, Metric.CYCLES_PER_S).isEmpty()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (Metric metric : Report.METERED_METRICS) {
            Report.Values metered = report.values(S1Uncontended.METERED_CASE, Library.RELOCK, metric);
            Report.Values plain = report.values(S1Uncontended.PLAIN_CASE, Library.RELOCK, metric);
            if (metered.isEmpty() || plain.isEmpty()) {
                continue;
            }
            List<Double> pairs = report.meteredRatios(metric);
            parts.add(metric.label() + " " + metric.format(metered.median()) + " vs " + metric.format(plain.median())
                    + " = " + times(metered.median() / plain.median())
                    + (pairs.size() > 1 ? " (repeats " + times(Collections.min(pairs)) + "–" + times(Collections.max(pairs))
                            + ")" : ""));
        }
        return "Metrics cost: Relock + RelockMetrics (SimpleMeterRegistry) vs plain Relock, 64 threads ["
                + S1Uncontended.METERED_CASE + " vs " + S1Uncontended.PLAIN_CASE + "]: " + String.join("; ", parts) + ".";
    }

    /**
     * S7 in words: what its pipelines do, what "JVM threads used" counts, and each library's
     * medians of acquisitions/s, wait p99 and threads, with Relock over the best peer; null when
     * the run did not have S7.
     */
    String reactiveText() {
        String caseId = S7Reactive.CASE;
        if (!report.caseIds().contains(caseId)) {
            return null;
        }
        List<String> figures = new ArrayList<>();
        for (Library library : Library.values()) {
            String unavailable = report.unavailable(caseId, library);
            Report.Values acquisitions = report.values(caseId, library, Metric.ACQUISITIONS_PER_S);
            if (unavailable != null) {
                figures.add(library.displayName() + " not available (" + unavailable + ")");
            } else if (acquisitions.isEmpty()) {
                figures.add(library.displayName() + " no result (see errors)");
            } else {
                double p99 = report.values(caseId, library, Metric.WAIT_P99_US).median();
                double threads = report.values(caseId, library, Metric.THREADS_USED).median();
                Report.Values least = report.values(caseId, library, Metric.PIPELINE_SHARE_MIN);
                Report.Values most = report.values(caseId, library, Metric.PIPELINE_SHARE_MAX);
                figures.add(library.displayName() + " " + Metric.ACQUISITIONS_PER_S.format(acquisitions.median())
                        + " acquisitions/s, wait p99 " + (p99 >= 10_000 ? Metric.WAIT_MAX_MS.format(p99 / 1e3) + " ms"
                                : Metric.WAIT_P99_US.format(p99) + " µs")
                        + (least.isEmpty() || most.isEmpty() ? "" : ", pipeline shares "
                                + Metric.PIPELINE_SHARE_MIN.format(least.min()) + "–"
                                + Metric.PIPELINE_SHARE_MAX.format(most.max()))
                        + ", " + Metric.THREADS_USED.format(threads) + " JVM threads used");
            }
        }
        // Redisson is the only peer with a reactive lock.
        List<String> ratios = new ArrayList<>();
        for (Metric metric : List.of(Metric.ACQUISITIONS_PER_S, Metric.WAIT_P99_US, Metric.THREADS_USED)) {
            String ratio = ratioText(caseId, metric, Library.REDISSON);
            if (!ratio.isEmpty()) {
                ratios.add(metric.label() + " " + ratio);
            }
        }
        return "Reactive [" + caseId + "]: " + S7Reactive.Shape.of(caseId).text() + " in flight on one lock name, each "
                + "subscription an owner of its own that acquires, runs S2's critical section and releases, and its "
                + "pipeline subscribes again, without blocking a thread (Relock: relock-reactor's "
                + "ReactiveLock.withLock; Redisson: RLockReactive lock(id)/unlock(id) in Mono.usingWhen, a new id per "
                + "subscription). JVM "
                + "threads used: the most live threads during the window minus those before the clients were created "
                + "(the bench adds none); pipeline shares: the fewest and most acquisitions of one pipeline over an "
                + "equal share, over all repeats. "
                + String.join("; ", figures) + "."
                + (ratios.isEmpty() ? "" : " Relock over Redisson: " + String.join(", ", ratios) + ".");
    }

    /** A header row: {@code before}, a column per library, then {@code after}. */
    private static String[] header(List<String> before, List<String> after) {
        List<String> header = new ArrayList<>(before);
        for (Library library : Library.values()) {
            header.add(library.displayName());
        }
        header.addAll(after);
        return header.toArray(String[]::new);
    }

    static String spread(Metric metric, Report.Values values) {
        if (values.isEmpty()) {
            return "–";
        }
        String median = metric.format(values.median());
        String min = metric.format(values.min());
        String max = metric.format(values.max());
        return min.equals(max) && values.present().size() > 1 ? median + " (all)"
                : values.present().size() > 1 ? median + " (" + min + "–" + max + ")" : median;
    }

    static String times(double ratio) {
        return String.format(Locale.ROOT, ratio >= 10 ? "%.1f×" : "%.2f×", ratio);
    }

    static String seconds(java.time.Duration duration) {
        double value = duration.toMillis() / 1000.0;
        return (value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value)) + " s";
    }

    /** Rows as aligned text columns, those from {@code rightFrom} on aligned right. */
    static String columns(List<String[]> rows, int rightFrom) {
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
    static String markdownTable(List<String[]> rows, int rightFrom) {
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

    private static String pad(String text, int width, boolean right) {
        int length = text.codePointCount(0, text.length());
        String padding = " ".repeat(Math.max(0, width - length));
        return right ? padding + text : text + padding;
    }
}
