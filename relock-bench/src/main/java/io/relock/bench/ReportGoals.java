package io.relock.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The goals of a {@link Report}, one row each: whether the run's medians meet it, and the
 * reading behind that in words (the ratio and its range, the worst of a fleet, the round trips
 * and the JVM floor).
 */
final class ReportGoals {

    private final Report report;

    ReportGoals(Report report) {
        this.report = report;
    }

    String goalsText() {
        StringBuilder out = new StringBuilder("Goals (issues 5, 12, 21 and 25), from this run's medians (issue 21's "
                + "mixed fleet: both libraries, every repeat; \"every repeat\": the worst repeat against that repeat's "
                + "better peer); ✓ holds, ✗ misses, ? not measured in this run; "
                + "RT = one EVALSHA round trip (S0 p50, one connection); JVM floor = S0's bare Lettuce hand-off\n");
        List<String[]> rows = new ArrayList<>();
        for (String[] row : goalRows()) {
            rows.add(new String[] {"  " + row[0], "#" + row[1], row[2], row[3], row[4]});
        }
        out.append(ReportTables.columns(rows, 5));
        return out.toString();
    }

    List<String[]> goalRows() {
        List<String[]> rows = new ArrayList<>();
        for (Goal goal : Goal.ALL) {
            double value = report.measured(goal);
            String mark = Double.isFinite(value) ? (goal.holds(value) ? "✓" : "✗") : "?";
            rows.add(new String[] {mark, goal.issue(), goal.text() + " [" + goal.caseId() + "]", goal.targetText(),
                    measuredText(goal, value)});
        }
        return rows;
    }

    /**
     * Where not every acquisition is a hand-off (S3 {@code w1cr}: a lock may go back to its
     * releaser), each library's share of hand-offs: a hand-off p50 is over those alone.
     */
    private String handOffShares(String caseId) {
        List<String> shares = new ArrayList<>();
        for (Library library : Library.values()) {
            double share = report.values(caseId, library, Metric.HANDOFF_SHARE).median();
            if (Double.isFinite(share)) {
                shares.add(library.displayName() + " " + Metric.HANDOFF_SHARE.format(share));
            }
        }
        return shares.isEmpty() ? "" : "; hand-offs/acquisition " + String.join(", ", shares);
    }

    private String measuredText(Goal goal, double value) {
        if (!Double.isFinite(value)) {
            if (!report.caseIds().contains(goal.caseId())) {
                return "case " + goal.caseId() + " not run";
            }
            if (goal.isFleet()) {
                return "not measured for both libraries in every repeat (see errors)";
            }
            if (goal.kind() == Goal.Kind.RATIO_EVERY_REPEAT_AT_MOST) {
                return "not measured for Relock and a peer in every repeat (see errors)";
            }
            if (goal.kind() == Goal.Kind.FLOOR_AT_MOST && !Double.isFinite(report.floorOf(goal.metric()))) {
                return "no JVM floor (S0 not run)";
            }
            return goal.kind() == Goal.Kind.ROUND_TRIPS_AT_MOST && !Double.isFinite(report.roundTripMicros())
                    ? "no EVALSHA round trip (S0 not run)" : "no value (see errors)";
        }
        Metric metric = goal.metric();
        double relock = report.values(goal.caseId(), Library.RELOCK, metric).median();
        switch (goal.kind()) {
            case RATIO_AT_LEAST, RATIO_AT_MOST -> {
                Library baseline = report.baseline(goal);
                List<Double> pairs = report.pairRatios(goal.caseId(), metric, baseline);
                String text = ReportTables.times(value) + " " + baseline.displayName() + (pairs.size() > 1
                        ? " (repeats " + ReportTables.times(Collections.min(pairs)) + "–" + ReportTables.times(Collections.max(pairs)) + ")" : "");
                Library best = report.bestPeer(goal.caseId(), metric);
                if (best != null && best != baseline) {
                    text += "; " + ReportTables.times(report.ratio(goal.caseId(), metric, best)) + " best peer " + best.displayName();
                }
                return text + handOffShares(goal.caseId());
            }
            case RATIO_EVERY_REPEAT_AT_MOST -> {
                List<String> repeats = new ArrayList<>();
                Report.RepeatRatio worst = null;
                for (Report.RepeatRatio ratio : report.repeatRatios(goal.caseId(), metric)) {
                    repeats.add(ReportTables.times(ratio.ratio()) + " " + ratio.peer().displayName());
                    if (worst == null || ratio.ratio() > worst.ratio()) {
                        worst = ratio;
                    }
                }
                String text = "worst repeat " + ReportTables.times(value) + " (repeat " + (worst.repeat() + 1) + ", vs "
                        + worst.peer().displayName() + "); by repeat " + String.join(", ", repeats);
                Library best = report.bestPeer(goal.caseId(), metric);
                if (best != null) {
                    text += "; medians " + ReportTables.times(report.ratio(goal.caseId(), metric, best)) + " best peer "
                            + best.displayName();
                }
                return text;
            }
            case FLOOR_AT_MOST -> {
                return ReportTables.times(value) + " JVM floor (Relock " + metric.format(relock) + " µs; floor "
                        + metric.format(report.floorOf(metric)) + " µs)";
            }
            case FLEET_AT_MOST, FLEET_FACTOR_WITHIN -> {
                List<String> libraries = new ArrayList<>();
                for (Library library : S6MixedFleet.FLEET) {
                    libraries.add(library.displayName() + " " + ReportTables.spread(metric, report.values(goal.caseId(), library, metric)));
                }
                String worst = goal.kind() == Goal.Kind.FLEET_AT_MOST ? "worst " + metric.format(value)
                        : value == Double.MAX_VALUE ? "a library acquired nothing" : "worst " + ReportTables.times(value) + " from equal";
                return worst + "; " + String.join(", ", libraries);
            }
            case ROUND_TRIPS_AT_MOST -> {
                String count = goal.roundTrips() == 1 ? String.format(Locale.ROOT, "%.2f RT", value)
                        : ReportTables.times(value) + " " + goal.roundTrips() + " RT";
                String text = count + " (Relock " + metric.format(relock) + " µs; 1 RT = "
                        + metric.format(report.roundTripMicros()) + " µs)";
                double floor = report.floorOf(metric);
                if (Double.isFinite(floor)) {
                    double floorRoundTrips = floor / (goal.roundTrips() * report.roundTripMicros());
                    text += "; the JVM floor alone is " + (goal.roundTrips() == 1
                            ? String.format(Locale.ROOT, "%.2f RT", floorRoundTrips)
                            : ReportTables.times(floorRoundTrips) + " " + goal.roundTrips() + " RT") + " (" + metric.format(floor)
                            + " µs), Relock " + ReportTables.times(relock / floor) + " of it";
                }
                return text;
            }
            default -> {
                List<String> peers = new ArrayList<>();
                for (Library peer : Library.peers()) {
                    double other = report.values(goal.caseId(), peer, metric).median();
                    if (Double.isFinite(other)) {
                        peers.add(peer.displayName() + " " + metric.format(other));
                    }
                }
                return "Relock " + metric.format(value) + (peers.isEmpty() ? "" : " (" + String.join(", ", peers) + ")");
            }
        }
    }
}
