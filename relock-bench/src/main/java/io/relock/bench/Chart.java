package io.relock.bench;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The PNG a reader looks at first: for each headline metric, how many times better Relock did
 * than the best peer in that case in this run (throughput: Relock/peer; costs and latencies:
 * peer/Relock), the best peer (named in each label) being 1× by definition, with the goal
 * beside it where an issue sets one (the strictest, where goals overlap). A logarithmic axis,
 * so that 0.5× and 2× look equally far from parity.
 */
final class Chart {

    private static final Color PEER = new Color(0xB0, 0xB0, 0xB0);
    private static final Color RELOCK = new Color(0x1F, 0x77, 0xB4);
    private static final Color GOAL = new Color(0xD6, 0x27, 0x28);

    private Chart() {
    }

    static void write(List<Report.Bar> bars, String subtitle, Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder()
                .width(1500)
                .height(760)
                .title("Relock vs the best peer per metric (Redisson or RedisLockRegistry), same Redis, same run: "
                        + "how many times better Relock is")
                .xAxisTitle(subtitle)
                .yAxisTitle("× better than the best peer (log scale)")
                .build();
        chart.getStyler()
                .setLegendPosition(Styler.LegendPosition.InsideNE)
                .setChartBackgroundColor(Color.WHITE)
                .setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18))
                .setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13))
                .setSeriesColors(new Color[] {RELOCK, GOAL, PEER})
                .setMarkerSize(12)
                .setSeriesMarkers(new org.knowm.xchart.style.markers.Marker[] {SeriesMarkers.NONE, SeriesMarkers.DIAMOND,
                        SeriesMarkers.NONE});
        chart.getStyler()
                .setYAxisLogarithmic(true)
                .setXAxisLabelRotation(35)
                .setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12))
                .setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13))
                .setPlotGridLinesColor(new Color(0xE0, 0xE0, 0xE0))
                .setYAxisTickLabelsFormattingFunction(Chart::times);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler()
                .setLabelsVisible(true)
                .setLabelsRotation(0)
                .setLabelsPosition(0.12)
                .setLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11))
                .setAvailableSpaceFill(0.6)
                .setOverlapped(true);

        List<String> labels = new ArrayList<>();
        List<Double> parity = new ArrayList<>();
        List<Double> relock = new ArrayList<>();
        List<Double> goals = new ArrayList<>();
        double lowest = 1;
        double highest = 1;
        for (Report.Bar bar : bars) {
            labels.add(bar.label());
            parity.add(1.0);
            relock.add(bar.advantage());
            goals.add(Double.isFinite(bar.goalAdvantage()) ? bar.goalAdvantage() : null);
            lowest = Math.min(lowest, Math.min(bar.advantage(), finiteOr(bar.goalAdvantage(), 1)));
            highest = Math.max(highest, Math.max(bar.advantage(), finiteOr(bar.goalAdvantage(), 1)));
        }
        if (labels.isEmpty()) {
            labels.add("no case with Relock and a peer");
            parity.add(1.0);
            relock.add(1.0);
            goals.add(null);
        }
        // Every group starts from the same floor: the grey bar (1×) is the yardstick beside Relock's.
        chart.getStyler().setYAxisMin(lowest >= 0.6 ? 0.5 : lowest >= 0.3 ? 0.25 : Math.pow(10, Math.floor(Math.log10(lowest * 0.8))));
        chart.getStyler().setYAxisMax(Math.max(2, highest * 2));
        chart.addSeries("Relock", labels, relock);
        CategorySeries goal = chart.addSeries("goal (issues 5, 12): the bar should reach it", labels, goals);
        goal.setChartCategorySeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Scatter);
        CategorySeries peer = chart.addSeries("best peer (1×), named in each label", labels, parity);
        peer.setChartCategorySeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);

        Files.createDirectories(file.toAbsolutePath().getParent());
        try (OutputStream out = Files.newOutputStream(file)) {
            if (!ImageIO.write(BitmapEncoder.getBufferedImage(chart), "png", out)) {
                throw new IOException("no PNG writer in this JDK");
            }
        }
    }

    /** 1×, 1.49×, 16×: two decimals where they matter. */
    static String times(double value) {
        boolean whole = value >= 10 || Math.abs(value - Math.rint(value)) < 0.005;
        return String.format(Locale.ROOT, whole ? "%.0f×" : value >= 1 ? "%.2f×" : "%.2g×", value);
    }

    private static double finiteOr(double value, double fallback) {
        return Double.isFinite(value) ? value : fallback;
    }
}
