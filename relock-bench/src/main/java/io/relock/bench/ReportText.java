package io.relock.bench;

import java.util.List;
import java.util.Locale;

/** The text of a {@link Report}, as the bench prints it to stdout at the end of a run. */
final class ReportText {

    private final Report report;
    private final ReportTables tables;
    private final ReportGoals goals;

    ReportText(Report report) {
        this.report = report;
        this.tables = new ReportTables(report);
        this.goals = new ReportGoals(report);
    }

    /** The whole report as printed to stdout. */
    String text() {
        StringBuilder out = new StringBuilder();
        out.append("Relock bench, ").append(report.environment().dateText()).append('\n');
        out.append("  machine:  ").append(report.environment().machineText()).append('\n');
        out.append("  versions: ").append(report.environment().versionsText()).append('\n');
        out.append("  method:   ").append(tables.methodText()).append("\n\n");

        if (report.options().scenarios().contains("S0")) {
            out.append("S0 ceiling: redis-benchmark, and a bare Lettuce client (the JVM floor), against the same "
                    + "redis-server (no lock library)\n");
            if (report.ceiling().isEmpty()) {
                out.append("  ").append(report.ceilingNote()).append('\n');
            } else {
                for (String[] row : tables.ceilingRows()) {
                    out.append(String.format(Locale.ROOT, "  %-38s %-14s %-24s %s%n", (Object[]) row));
                }
            }
            out.append('\n');
        }

        out.append(ReportTables.columns(tables.tableRows(), 2)).append('\n');
        List<String[]> againstCeiling = tables.ceilingComparisonRows();
        if (againstCeiling.size() > 1) {
            out.append("Against the ceiling: rates as a share of half S0's EVALSHA rate (a cycle is two script calls), "
                    + "latencies in EVALSHA round trips (S0's p50, one connection)\n");
            out.append(ReportTables.columns(againstCeiling, 2)).append('\n');
        }
        List<String[]> againstFloor = tables.floorComparisonRows();
        if (againstFloor.size() > 1) {
            out.append(ReportTables.FLOOR_TEXT).append('\n');
            out.append(ReportTables.columns(againstFloor, 2)).append('\n');
        }
        out.append(goals.goalsText());
        out.append('\n').append(tables.correctnessText()).append('\n');
        String metered = tables.meteredText();
        if (metered != null) {
            out.append('\n').append(metered).append('\n');
        }
        String reactive = tables.reactiveText();
        if (reactive != null) {
            out.append('\n').append(reactive).append('\n');
        }
        for (Report.Run run : report.errors()) {
            out.append("\nERROR in ").append(run.caseId()).append(", ").append(run.library().displayName())
                    .append(", repeat ").append(run.repeat() + 1).append(":\n").append(run.error().strip()).append('\n');
        }
        return out.toString();
    }
}
