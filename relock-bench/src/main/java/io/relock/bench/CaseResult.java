package io.relock.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one case measured for one library: metrics (compared between libraries), checks (must
 * be zero: correctness in the critical section), details (for the analysis, not compared),
 * and why it has no numbers when it has none.
 */
final class CaseResult {

    private final String caseId;
    private final String title;
    private final Map<String, Object> metrics = new LinkedHashMap<>();
    private final Map<String, Object> checks = new LinkedHashMap<>();
    private final Map<String, Object> details = new LinkedHashMap<>();
    private final Map<Library, CaseResult> beside = new LinkedHashMap<>();
    private String unavailable;
    private String error;

    CaseResult(String caseId, String title) {
        this.caseId = caseId;
        this.title = title;
    }

    CaseResult metric(Metric metric, double value) {
        if (Double.isFinite(value)) {
            metrics.put(metric.key(), value);
        }
        return this;
    }

    /**
     * The measurements every timed case has: throughput and latency percentiles of the window,
     * Redis commands (INFO commandstats, including commands inside scripts), client and Redis
     * CPU per operation; round trips per operation when the counting phase ran (MONITOR); and,
     * as details, which commands make up those counts.
     */
    CaseResult load(Load.Outcome outcome, Metric throughput, Metric p50, Metric p99) {
        metric(throughput, outcome.opsPerSecond());
        if (outcome.latency().getTotalCount() > 0) {
            metric(p50, outcome.latency().getValueAtPercentile(50) / 1e3);
            metric(p99, outcome.latency().getValueAtPercentile(99) / 1e3);
        }
        metric(Metric.COMMANDS_PER_OP, outcome.perOp(outcome.server().totalCalls()));
        metric(Metric.JVM_CPU_US_PER_OP, outcome.perOp(outcome.cpuNanos() / 1e3));
        metric(Metric.REDIS_CPU_US_PER_OP, outcome.perOp(outcome.server().cpuSeconds() * 1e6));
        detail("java_threads_cpu_us_per_op", outcome.perOp(outcome.javaThreadsCpuNanos() / 1e3));
        detail("ops", outcome.ops());
        detail("seconds", outcome.seconds());
        detail("commands_per_op", perOp(outcome.server().calls(), outcome.ops()));
        Monitor.Counts counts = outcome.counts();
        if (counts != null && outcome.countOps() > 0) {
            metric(Metric.ROUND_TRIPS_PER_OP, (double) counts.clientTotal() / outcome.countOps());
            detail("counted_ops", outcome.countOps());
            detail("client_commands_per_op", perOp(counts.clientCommands(), outcome.countOps()));
            detail("script_commands_per_op", perOp(counts.scriptCommands(), outcome.countOps()));
        }
        return error(outcome.error());
    }

    private static Map<String, Object> perOp(Map<String, Long> counts, long ops) {
        Map<String, Object> perOp = new TreeMap<>();
        if (ops > 0) {
            counts.forEach((command, count) -> {
                if (count != 0) {
                    perOp.put(command, (double) count / ops);
                }
            });
        }
        return perOp;
    }

    /** A count that must be zero, e.g. overlapping holders. */
    CaseResult check(String name, long value) {
        checks.put(name, value);
        return this;
    }

    CaseResult detail(String name, Object value) {
        details.put(name, value);
        return this;
    }

    /** The library has no such lock in this version; nothing is measured. */
    CaseResult unavailable(String why) {
        this.unavailable = why;
        return this;
    }

    /** The case failed; the text says how (stack trace or thread dump). */
    CaseResult error(String text) {
        if (text != null) {
            this.error = this.error == null ? text : this.error + "\n" + text;
        }
        return this;
    }

    /**
     * What another library measured in the same run of the case, beside the worker's own (S6:
     * both libraries on one name in one worker); reported as that library's result.
     */
    CaseResult beside(Library library, CaseResult other) {
        beside.put(library, other);
        return this;
    }

    /** This result as the worker's library's, then each result {@link #beside} it as its library's. */
    List<Map<String, Object>> toJsons(Library library) {
        List<Map<String, Object>> all = new ArrayList<>();
        all.add(toJson(library));
        beside.forEach((other, result) -> all.add(result.toJson(other)));
        return all;
    }

    Map<String, Object> toJson(Library library) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("case", caseId);
        json.put("title", title);
        json.put("library", library.id());
        json.put("metrics", metrics);
        json.put("checks", checks);
        json.put("details", details);
        json.put("unavailable", unavailable);
        json.put("error", error);
        return json;
    }
}
