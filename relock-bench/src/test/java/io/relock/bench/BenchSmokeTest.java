package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the bench end to end on its smallest cases (S1 one thread, S1 64 threads with and
 * without metrics, S3 across clients, with long holds and with a releaser asking again at once,
 * and across JVMs; one-second windows, every library, each
 * in its own worker JVM), through the same code as the bench command, so that the bench cannot
 * rot unnoticed. Asserts that the files are written and the counters are
 * positive; never asserts a timing.
 */
class BenchSmokeTest {

    @Test
    void theSmallestCaseRunsForEveryLibraryAndWritesItsFiles(@TempDir Path out) throws Exception {
        Options options = Options.parse("--cases", "S1/t1", "--window", "1s", "--warmup", "300ms", "--repeats", "1",
                "--out", out.toString());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        Bench.Outcome outcome;
        try (PrintStream print = new PrintStream(console, true, StandardCharsets.UTF_8)) {
            outcome = Bench.run(options, "--cases S1/t1", print);
        }
        String printed = console.toString(StandardCharsets.UTF_8);

        Map<String, Object> results = Json.object(Json.parse(Files.readString(outcome.directory().resolve("results.json"))));
        List<Map<String, Object>> runs = Json.array(results.get("runs")).stream().map(Json::object).toList();
        assertThat(runs).as(printed).hasSize(3);
        assertThat(runs.stream().map(run -> (String) run.get("library")).collect(Collectors.toSet()))
                .isEqualTo(Set.of("relock", "redisson", "registry"));
        for (Map<String, Object> run : runs) {
            assertThat(run.get("error")).as(printed).isNull();
            Map<String, Object> metrics = Json.object(run.get("metrics"));
            for (Metric metric : List.of(Metric.CYCLES_PER_S, Metric.CYCLE_P50_US, Metric.COMMANDS_PER_OP,
                    Metric.ROUND_TRIPS_PER_OP, Metric.JVM_CPU_US_PER_OP)) {
                assertThat(((Number) metrics.get(metric.key())).doubleValue()).as(run.get("library") + " " + metric)
                        .isPositive();
            }
        }
        assertThat(Json.array(results.get("goals"))).isNotEmpty();
        assertThat(outcome.directory().resolve("chart.png")).isNotEmptyFile();
        assertThat(outcome.directory().resolve("table.txt")).isNotEmptyFile();
        assertThat(Files.readString(out.resolve("latest.md"))).contains("| S1 uncontended, 1 thread [S1/t1] | cycles/s |");
        assertThat(printed).contains("Goals (issues 5, 12, 21 and 25)");
    }

    @Test
    void handOffsAcrossClientsAndAcrossJvmsRunForEveryLibrary(@TempDir Path out) throws Exception {
        // S3 runs half the window: 0.5 s, about 200 hand-offs per case (about 90 with w1c5's 5 ms holds).
        String cases = "S3/w1c,S3/w1c5,S3/w1cr,S3/w1j";
        Options options = Options.parse("--cases", cases, "--window", "1s", "--warmup", "400ms", "--repeats", "1",
                "--out", out.toString());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        Bench.Outcome outcome;
        try (PrintStream print = new PrintStream(console, true, StandardCharsets.UTF_8)) {
            outcome = Bench.run(options, "--cases " + cases, print);
        }
        String printed = console.toString(StandardCharsets.UTF_8);

        Map<String, Object> results = Json.object(Json.parse(Files.readString(outcome.directory().resolve("results.json"))));
        List<Map<String, Object>> runs = Json.array(results.get("runs")).stream().map(Json::object).toList();
        assertThat(runs).as(printed).hasSize(12);
        for (Map<String, Object> run : runs) {
            String what = run.get("library") + " " + run.get("case") + "\n" + printed;
            assertThat(run.get("error")).as(what).isNull();
            Map<String, Object> details = Json.object(run.get("details"));
            assertThat(((Number) details.get("client_instances")).longValue()).as(what).isEqualTo(2);
            Map<String, Object> metrics = Json.object(run.get("metrics"));
            // With a releaser asking again, a library may give the lock back to it: every
            // acquisition counts, the hand-offs among them may be few.
            List<Metric> positive = run.get("case").equals("S3/w1cr")
                    ? List.of(Metric.ACQUISITIONS_PER_S, Metric.ROUND_TRIPS_PER_OP, Metric.JVM_CPU_US_PER_OP)
                    : List.of(Metric.HANDOFFS_PER_S, Metric.HANDOFF_P50_US, Metric.ROUND_TRIPS_PER_OP,
                            Metric.JVM_CPU_US_PER_OP);
            for (Metric metric : positive) {
                assertThat(((Number) metrics.get(metric.key())).doubleValue()).as(metric + " " + what).isPositive();
            }
            if (run.get("case").equals("S3/w1cr")) {
                assertThat(((Number) metrics.get(Metric.HANDOFF_SHARE.key())).doubleValue()).as(what).isBetween(0.0, 1.0);
                assertThat(((Number) details.get("hand_offs")).longValue()).as(what)
                        .isLessThanOrEqualTo(((Number) details.get("ops")).longValue());
            }
            if (run.get("case").equals("S3/w1c5")) {
                assertThat(((Number) details.get("releases_held_for_waiters")).longValue()).as(what)
                        .isLessThanOrEqualTo(((Number) details.get("ops")).longValue());
            }
        }
        assertThat(Files.readString(out.resolve("latest.md")))
                .contains("| S3 hand-off, 1 waiter on another client [S3/w1c] | hand-offs/s |")
                .contains("| S3 hand-off, 1 waiter on another client, holds of 5 ± 1 ms released once the waiter is in "
                        + "lock() [S3/w1c5] | hand-offs/s |")
                .contains("| S3 hand-off, 1 waiter on another client, the releaser asks again at once [S3/w1cr] | "
                        + "acquisitions/s |")
                .contains("| S3 hand-off, 1 waiter in another JVM [S3/w1j] | hand-offs/s |");
        assertThat(printed).containsPattern("#25 +S3 1 waiter on another client, holds of 5 ± 1 ms released once the"
                + " waiter is in lock\\(\\): hand-off p50 \\[S3/w1c5\\] +≤ 0\\.5× best peer, every repeat +worst repeat ");
    }

    @Test
    void theMeteredCaseRunsBesideThePlainOneAndItsCostIsReported(@TempDir Path out) throws Exception {
        Options options = Options.parse("--cases", "S1/t64,S1/t64m", "--window", "1s", "--warmup", "300ms",
                "--repeats", "1", "--out", out.toString());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        Bench.Outcome outcome;
        try (PrintStream print = new PrintStream(console, true, StandardCharsets.UTF_8)) {
            outcome = Bench.run(options, "--cases S1/t64,S1/t64m", print);
        }
        String printed = console.toString(StandardCharsets.UTF_8);

        Map<String, Object> results = Json.object(Json.parse(Files.readString(outcome.directory().resolve("results.json"))));
        List<Map<String, Object>> metered = Json.array(results.get("runs")).stream().map(Json::object)
                .filter(run -> run.get("case").equals("S1/t64m")).toList();
        assertThat(metered).as(printed).hasSize(3);
        for (Map<String, Object> run : metered) {
            assertThat(run.get("error")).as(printed).isNull();
            if (run.get("library").equals("relock")) {
                Map<String, Object> details = Json.object(run.get("details"));
                // The meters saw at least every cycle of the window (and those of the warm-up).
                assertThat(((Number) details.get("metered_acquires")).longValue()).as(printed)
                        .isGreaterThanOrEqualTo(((Number) details.get("ops")).longValue()).isPositive();
            } else {
                assertThat(run.get("unavailable")).as(printed).isNotNull();
            }
        }
        assertThat(Json.object(Json.object(results.get("metered_vs_plain")).get("cycles_per_s")).get("ratio"))
                .isInstanceOf(Number.class);
        assertThat(printed).contains("Metrics cost: Relock + RelockMetrics (SimpleMeterRegistry) vs plain Relock, "
                + "64 threads [S1/t64m vs S1/t64]: cycles/s ");
        assertThat(Files.readString(out.resolve("latest.md"))).contains("Metrics cost: ");
    }
}
