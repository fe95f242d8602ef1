package io.relock.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The JSON of a {@link Report}: {@code results.json}, every raw result and every reading of it. */
final class ReportJson {

    private final Report report;

    ReportJson(Report report) {
        this.report = report;
    }

    /** {@code results.json}: every raw result and every reading of it. */
    Map<String, Object> json() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("date", report.environment().start().toOffsetDateTime().toString());
        json.put("command", report.environment().command());
        json.put("elapsed_s", report.elapsedSeconds());
        json.put("machine", report.environment().machine());
        json.put("versions", report.environment().versions());
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("window_ms", report.options().window().toMillis());
        settings.put("warmup_ms", report.options().warmup().toMillis());
        settings.put("count_ms", report.options().count().toMillis());
        settings.put("repeats", report.options().repeats());
        settings.put("scenarios", List.copyOf(report.options().scenarios()));
        settings.put("cases", List.copyOf(report.options().cases()));
        settings.put("quick", report.options().quick());
        settings.put("worker_heap", report.options().heap());
        json.put("options", settings);

        Map<String, Object> s0 = new LinkedHashMap<>();
        s0.put("note", report.ceilingNote());
        s0.put("rows", report.ceiling().stream().map(S0Ceiling.Row::toJson).toList());
        json.put("ceiling", s0);

        List<Object> goals = new ArrayList<>();
        for (Goal goal : Goal.ALL) {
            Map<String, Object> entry = new LinkedHashMap<>();
            double value = report.measured(goal);
            entry.put("goal", goal.text());
            entry.put("issue", goal.issue());
            entry.put("case", goal.caseId());
            entry.put("metric", goal.metric().key());
            entry.put("target", goal.targetText());
            Library baseline = report.baseline(goal);
            entry.put("baseline", baseline == null ? null : baseline.id());
            entry.put("measured", value);
            for (Library library : Library.values()) {
                entry.put(library.id(), report.values(goal.caseId(), library, goal.metric()).median());
            }
            if (goal.kind() == Goal.Kind.RATIO_EVERY_REPEAT_AT_MOST) {
                List<Object> byRepeat = new ArrayList<>();
                for (Report.RepeatRatio ratio : report.repeatRatios(goal.caseId(), goal.metric())) {
                    Map<String, Object> reading = new LinkedHashMap<>();
                    reading.put("ratio", ratio == null ? null : ratio.ratio());
                    reading.put("peer", ratio == null ? null : ratio.peer().id());
                    byRepeat.add(reading);
                }
                entry.put("by_repeat", byRepeat);
            }
            if (goal.kind() == Goal.Kind.FLOOR_AT_MOST) {
                entry.put("jvm_floor", report.floorOf(goal.metric()));
            }
            entry.put("holds", Double.isFinite(value) ? goal.holds(value) : null);
            goals.add(entry);
        }
        json.put("goals", goals);

        List<Object> againstCeiling = new ArrayList<>();
        for (Report.CeilingItem item : Report.CEILING_ITEMS) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("case", item.caseId());
            entry.put("metric", item.metric().key());
            entry.put("ceiling", item.isRate() ? "evalsha_rate_c" + item.connections() + "_half" : "evalsha_p50_c1_us");
            entry.put("ceiling_value", item.isRate() ? report.ceilingRate(item.connections()) / 2 : report.roundTripMicros());
            for (Library library : Library.values()) {
                entry.put(library.id(), report.againstCeiling(item, library));
            }
            againstCeiling.add(entry);
        }
        json.put("against_ceiling", againstCeiling);

        List<Object> summary = new ArrayList<>();
        for (String caseId : report.caseIds()) {
            for (Metric metric : report.metricsOf(caseId)) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("case", caseId);
                entry.put("title", report.title(caseId));
                entry.put("metric", metric.key());
                entry.put("label", metric.label());
                entry.put("better", metric.better().name().toLowerCase(Locale.ROOT));
                for (Library library : Library.values()) {
                    entry.put(library.id(), report.values(caseId, library, metric).toJson());
                }
                Library best = report.bestPeer(caseId, metric);
                entry.put("best_peer", best == null ? null : best.id());
                entry.put("ratio", report.ratio(caseId, metric, best));
                entry.put("pair_ratios", report.pairRatios(caseId, metric, best));
                entry.put("ratio_redisson", report.ratio(caseId, metric, Library.REDISSON));
                summary.add(entry);
            }
        }
        json.put("summary", summary);
        json.put("metered_vs_plain", meteredJson());
        json.put("correct", report.dirty().isEmpty());
        json.put("runs", report.runs().stream().map(Report.Run::toJson).toList());
        return json;
    }

    private Map<String, Object> meteredJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        for (Metric metric : Report.METERED_METRICS) {
            Report.Values metered = report.values(S1Uncontended.METERED_CASE, Library.RELOCK, metric);
            Report.Values plain = report.values(S1Uncontended.PLAIN_CASE, Library.RELOCK, metric);
            if (metered.isEmpty() || plain.isEmpty()) {
                continue;
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("metered", metered.median());
            entry.put("plain", plain.median());
            entry.put("ratio", metered.median() / plain.median());
            entry.put("pair_ratios", report.meteredRatios(metric));
            json.put(metric.key(), entry);
        }
        return json;
    }
}
