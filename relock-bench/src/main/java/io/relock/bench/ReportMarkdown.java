package io.relock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The Markdown of a {@link Report}: {@code latest.md}, which docs/performance.md summarises and links to. */
final class ReportMarkdown {

    private final Report report;
    private final ReportTables tables;
    private final ReportGoals goals;

    ReportMarkdown(Report report) {
        this.report = report;
        this.tables = new ReportTables(report);
        this.goals = new ReportGoals(report);
    }

    /** {@code latest.md}: what docs/performance.md summarises and links to. */
    String markdown(String chartPath, String runDirectory) {
        StringBuilder out = new StringBuilder();
        out.append("# Relock vs Redisson and RedisLockRegistry: latest bench run\n\n");
        out.append("Run ").append(report.environment().dateText()).append(" with `").append(report.environment().command())
                .append("` (").append(String.format(Locale.ROOT, "%.1f", report.elapsedSeconds() / 60)).append(" min); files in `")
                .append(runDirectory).append("/`.\n\n");
        out.append("- **Machine**: ").append(report.environment().machineText()).append('\n');
        out.append("- **Versions**: ").append(report.environment().versionsText()).append('\n');
        out.append("- **Method**: ").append(tables.methodText()).append(". Every library with its defaults (the registry "
                + "with PUB_SUB_LOCK), on one redis-server started by the bench. See `relock-bench/README.md`.\n\n");
        out.append("![Relock's advantage over the best peer per metric](").append(chartPath).append(")\n\n");
        out.append("## Goals\n\nRT = one EVALSHA round trip of the lock script (S0's p50 with one connection, this run).\n\n");
        out.append(ReportTables.markdownTable(withHeader(new String[] {"", "issue", "goal", "target", "measured"}, goals.goalRows()), 5));
        out.append('\n').append(tables.correctnessText().replace("\n", "\n\n")).append("\n\n");
        String metered = tables.meteredText();
        if (metered != null) {
            out.append(metered).append("\n\n");
        }
        String reactive = tables.reactiveText();
        if (reactive != null) {
            out.append(reactive).append("\n\n");
        }
        out.append("## Results\n\n");
        out.append(ReportTables.markdownTable(tables.tableRows(), 2));
        List<String[]> againstCeiling = tables.ceilingComparisonRows();
        if (againstCeiling.size() > 1) {
            out.append("\n## Against the ceiling\n\nRates as a share of half S0's EVALSHA rate (a cycle is two script "
                    + "calls); latencies in EVALSHA round trips (RT: S0's p50 with one connection).\n\n");
            out.append(ReportTables.markdownTable(againstCeiling, 2));
        }
        List<String[]> againstFloor = tables.floorComparisonRows();
        if (againstFloor.size() > 1) {
            out.append("\n## Against the JVM floor\n\n").append(ReportTables.FLOOR_TEXT).append(".\n\n");
            out.append(ReportTables.markdownTable(againstFloor, 2));
        }
        if (report.options().scenarios().contains("S0")) {
            out.append("\n## S0 ceiling (redis-benchmark and a bare Lettuce client, same server, no lock library)\n\n");
            if (report.ceiling().isEmpty()) {
                out.append(report.ceilingNote()).append('\n');
            } else {
                out.append(ReportTables.markdownTable(tables.ceilingRows(), 2));
            }
        }
        if (!report.errors().isEmpty()) {
            out.append("\n## Errors\n\n");
            for (Report.Run run : report.errors()) {
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
}
