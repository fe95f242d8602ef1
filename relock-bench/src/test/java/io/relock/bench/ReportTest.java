package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The readings of a run, on made-up results (no worker, no Redis): which peer is the best per
 * metric, the ratios against it, the goals against Redisson, the best peer and the EVALSHA
 * round trip, how a library a scenario does not run shows up, and S6's mixed fleet: both
 * libraries' figures on one row and its goals over both libraries and every repeat.
 */
class ReportTest {

    private final List<Report.Run> runs = new ArrayList<>();
    private final List<S0Ceiling.Row> ceiling = new ArrayList<>();

    @Test
    void theBestPeerIsTheBetterMedianInTheMetricsDirection() {
        // acquisitions/s: higher is better, so Redisson; commands per acquisition: lower is better, so the registry.
        result("S2/t8x4", Library.RELOCK, Map.of(Metric.ACQUISITIONS_PER_S, 3000.0, Metric.COMMANDS_PER_OP, 27.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 3400.0, Metric.COMMANDS_PER_OP, 26.0));
        result("S2/t8x4", Library.REDISSON, Map.of(Metric.ACQUISITIONS_PER_S, 2000.0, Metric.COMMANDS_PER_OP, 30.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 2000.0, Metric.COMMANDS_PER_OP, 30.0));
        result("S2/t8x4", Library.REGISTRY, Map.of(Metric.ACQUISITIONS_PER_S, 1800.0, Metric.COMMANDS_PER_OP, 12.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 1600.0, Metric.COMMANDS_PER_OP, 13.0));
        Report report = report();

        assertThat(report.bestPeer("S2/t8x4", Metric.ACQUISITIONS_PER_S)).isEqualTo(Library.REDISSON);
        assertThat(report.ratio("S2/t8x4", Metric.ACQUISITIONS_PER_S, Library.REDISSON)).isCloseTo(1.6, within(1e-9));
        assertThat(report.pairRatios("S2/t8x4", Metric.ACQUISITIONS_PER_S, Library.REDISSON))
                .containsExactly(1.5, 1.7);
        assertThat(report.bestPeer("S2/t8x4", Metric.COMMANDS_PER_OP)).isEqualTo(Library.REGISTRY);
        assertThat(report.bestPeer("S2/t8x4", Metric.SHARE_MIN)).as("a metric with no better direction").isNull();
    }

    @Test
    void goalsCompareWithTheirBaselineAndWithTheEvalshaRoundTrip() {
        result("S2/t8x4", Library.RELOCK, Map.of(Metric.ACQUISITIONS_PER_S, 4000.0), Map.of(Metric.ACQUISITIONS_PER_S, 4000.0));
        result("S2/t8x4", Library.REDISSON, Map.of(Metric.ACQUISITIONS_PER_S, 1900.0), Map.of(Metric.ACQUISITIONS_PER_S, 1900.0));
        result("S2/t8x4", Library.REGISTRY, Map.of(Metric.ACQUISITIONS_PER_S, 2500.0), Map.of(Metric.ACQUISITIONS_PER_S, 2500.0));
        result("S3/w1c", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 150.0), Map.of(Metric.HANDOFF_P50_US, 170.0));
        ceiling.add(new S0Ceiling.Row(0, Report.CEILING_TEST, 1, 12_000, 0.080, 0.2));
        ceiling.add(new S0Ceiling.Row(1, Report.CEILING_TEST, 1, 12_500, 0.080, 0.2));
        Report report = report();

        Goal againstRedisson = goal("5", "S2/t8x4", Metric.ACQUISITIONS_PER_S);
        Goal againstBestPeer = goal("12", "S2/t8x4", Metric.ACQUISITIONS_PER_S);
        assertThat(report.baseline(againstRedisson)).isEqualTo(Library.REDISSON);
        assertThat(againstRedisson.holds(report.measured(againstRedisson))).isTrue();
        assertThat(report.baseline(againstBestPeer)).isEqualTo(Library.REGISTRY);
        assertThat(againstBestPeer.holds(report.measured(againstBestPeer))).as("4000 / 2500 = 1.6×").isFalse();

        Goal roundTrips = Goal.ALL.stream().filter(goal -> goal.kind() == Goal.Kind.ROUND_TRIPS_AT_MOST
                && goal.caseId().equals("S3/w1c")).findFirst().orElseThrow();
        assertThat(report.roundTripMicros()).isCloseTo(80, within(1e-9));
        assertThat(report.measured(roundTrips)).as("160 µs over one 80 µs round trip").isCloseTo(2, within(1e-9));
        assertThat(roundTrips.holds(report.measured(roundTrips))).isTrue();
        assertThat(report.text()).contains("S3 1 waiter on another client: hand-off p50, in EVALSHA round trips")
                .contains("2.00 RT (Relock 160 µs; 1 RT = 80.0 µs)");
    }

    @Test
    void latenciesAreAlsoReadAgainstTheJvmFloor() {
        result("S3/w1c", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 300.0), Map.of(Metric.HANDOFF_P50_US, 320.0));
        result("S3/w1c", Library.REGISTRY, Map.of(Metric.HANDOFF_P50_US, 450.0), Map.of(Metric.HANDOFF_P50_US, 470.0));
        result("S1/t1", Library.RELOCK, Map.of(Metric.CYCLE_P50_US, 150.0), Map.of(Metric.CYCLE_P50_US, 150.0));
        ceiling.add(new S0Ceiling.Row(0, Report.CEILING_TEST, 1, 25_000, 0.040, 0.1));
        ceiling.add(new S0Ceiling.Row(0, JvmFloor.ROUND_TRIP, 1, 16_000, 0.060, 0.1));
        ceiling.add(new S0Ceiling.Row(0, JvmFloor.HAND_OFF, 1, 400, 0.220, 0.5));
        Report report = report();

        assertThat(report.floorOf(Metric.CYCLE_P50_US)).as("two bare round trips").isCloseTo(120, within(1e-9));
        assertThat(report.floorOf(Metric.HANDOFF_P50_US)).isCloseTo(220, within(1e-9));
        assertThat(report.roundTripMicros()).as("redis-benchmark's, not the JVM's").isCloseTo(40, within(1e-9));
        assertThat(report.text()).containsPattern("hand-off p50 µs ÷ JVM publish → woken thread +220 µs +1\\.41× +–"
                + " +2\\.09×")
                .contains("the JVM floor alone is 5.50 RT (220 µs), Relock 1.41× of it")
                .contains("the JVM floor alone is 1.50× 2 RT (120 µs), Relock 1.25× of it");
    }

    @Test
    void anEveryRepeatGoalReadsEachRepeatAgainstThatRepeatsBetterPeer() {
        // Repeat 1: 100 over the registry's 250 = 0.40×; repeat 2: 200 over Redisson's 300 = 0.67×. The
        // medians (150 over 300) meet 0.5×; the second repeat does not.
        result("S3/w1c5", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 100.0), Map.of(Metric.HANDOFF_P50_US, 200.0));
        result("S3/w1c5", Library.REDISSON, Map.of(Metric.HANDOFF_P50_US, 300.0), Map.of(Metric.HANDOFF_P50_US, 300.0));
        result("S3/w1c5", Library.REGISTRY, Map.of(Metric.HANDOFF_P50_US, 250.0), Map.of(Metric.HANDOFF_P50_US, 350.0));
        Report report = report();

        Goal everyRepeat = goal("25", "S3/w1c5", Metric.HANDOFF_P50_US);
        assertThat(everyRepeat.kind()).isEqualTo(Goal.Kind.RATIO_EVERY_REPEAT_AT_MOST);
        assertThat(everyRepeat.targetText()).isEqualTo("≤ 0.5× best peer, every repeat");
        assertThat(report.repeatRatios("S3/w1c5", Metric.HANDOFF_P50_US))
                .extracting(Report.RepeatRatio::peer).containsExactly(Library.REGISTRY, Library.REDISSON);
        assertThat(report.ratio("S3/w1c5", Metric.HANDOFF_P50_US, report.baseline(everyRepeat)))
                .as("the medians alone would hold").isCloseTo(0.5, within(1e-9));
        assertThat(report.measured(everyRepeat)).isCloseTo(200.0 / 300.0, within(1e-9));
        assertThat(everyRepeat.holds(report.measured(everyRepeat))).isFalse();
        assertThat(everyRepeat.holds(0.5)).isTrue();
        assertThat(report.text()).containsPattern("✗ +#25 +S3 1 waiter on another client, holds of 5 ± 1 ms released once"
                + " the waiter is in lock\\(\\): hand-off p50 \\[S3/w1c5\\] +≤ 0\\.5× best peer, every repeat +worst repeat"
                + " 0\\.67× \\(repeat 2, vs Redisson\\); by repeat 0\\.40× RedisLockRegistry, 0\\.67× Redisson; medians"
                + " 0\\.50× best peer Redisson");
        assertThat(report.bars()).filteredOn(bar -> bar.label().startsWith("S3 other client 5±1 ms hold p50"))
                .singleElement().satisfies(bar -> assertThat(bar.goalAdvantage()).isCloseTo(2, within(1e-9)));

        runs.removeIf(run -> run.library() == Library.RELOCK && run.caseId().equals("S3/w1c5"));
        result("S3/w1c5", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 100.0), Map.of());
        assertThat(report().measured(everyRepeat)).as("a repeat without Relock's value is not measured").isNaN();
    }

    @Test
    void aFloorGoalReadsRelockOverTheJvmFloorOfTheSameRun() {
        result("S3/w1c", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 170.0), Map.of(Metric.HANDOFF_P50_US, 180.0));
        result("S3/w1c", Library.REDISSON, Map.of(Metric.HANDOFF_P50_US, 330.0), Map.of(Metric.HANDOFF_P50_US, 320.0));
        Goal floor = goal("25", "S3/w1c", Metric.HANDOFF_P50_US);
        assertThat(floor.kind()).isEqualTo(Goal.Kind.FLOOR_AT_MOST);
        assertThat(report().measured(floor)).as("no S0: no floor").isNaN();
        assertThat(report().text()).contains("no JVM floor (S0 not run)");

        ceiling.add(new S0Ceiling.Row(0, JvmFloor.HAND_OFF, 1, 400, 0.140, 0.5));
        ceiling.add(new S0Ceiling.Row(1, JvmFloor.HAND_OFF, 1, 400, 0.152, 0.5));
        Report report = report();
        assertThat(report.measured(floor)).isCloseTo(175.0 / 146.0, within(1e-9));
        assertThat(floor.holds(report.measured(floor))).as("1.199× ≤ 1.2×").isTrue();
        assertThat(floor.holds(1.21)).isFalse();
        assertThat(report.text()).containsPattern("✓ +#25 +S3 1 waiter on another client: hand-off p50, over the JVM"
                + " floor \\(bare Lettuce hand-off\\) \\[S3/w1c\\] +≤ 1\\.2× JVM floor +1\\.20× JVM floor \\(Relock 175 µs;"
                + " floor 146 µs\\)");
        assertThat(goal("12, 25", "S3/w1c", Metric.HANDOFF_P50_US).kind()).isEqualTo(Goal.Kind.RATIO_AT_MOST);
    }

    @Test
    void issue25sSharedRedisAndContentionGoalsAreOnTheirCases() {
        result("S1/t64", Library.RELOCK, Map.of(Metric.REDIS_CPU_US_PER_OP, 22.3), Map.of(Metric.REDIS_CPU_US_PER_OP, 22.3));
        result("S1/t64", Library.REGISTRY, Map.of(Metric.REDIS_CPU_US_PER_OP, 17.6), Map.of(Metric.REDIS_CPU_US_PER_OP, 17.6));
        result("S1/t64", Library.REDISSON, Map.of(Metric.REDIS_CPU_US_PER_OP, 25.0), Map.of(Metric.REDIS_CPU_US_PER_OP, 25.0));
        result("S2/t2x4", Library.RELOCK, Map.of(Metric.ACQUISITIONS_PER_S, 4536.0, Metric.COMMANDS_PER_OP, 9.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 4536.0, Metric.COMMANDS_PER_OP, 21.0));
        result("S2/t2x4", Library.REGISTRY, Map.of(Metric.ACQUISITIONS_PER_S, 2662.0), Map.of(Metric.ACQUISITIONS_PER_S, 2662.0));
        Report report = report();

        Goal redisCpu = goal("25", "S1/t64", Metric.REDIS_CPU_US_PER_OP);
        assertThat(report.baseline(redisCpu)).isEqualTo(Library.REGISTRY);
        assertThat(redisCpu.holds(report.measured(redisCpu))).as("22.3 / 17.6 = 1.27×").isFalse();
        Goal rate = goal("25", "S2/t2x4", Metric.ACQUISITIONS_PER_S);
        assertThat(rate.holds(report.measured(rate))).as("1.70×").isFalse();
        assertThat(rate.holds(2.0)).isTrue();
        Goal commands = goal("25", "S2/t2x4", Metric.COMMANDS_PER_OP);
        assertThat(report.measured(commands)).as("the median of 9 and 21").isEqualTo(15.0);
        assertThat(commands.holds(report.measured(commands))).isFalse();
        assertThat(commands.holds(10.02)).as("within the count tolerance").isTrue();
        assertThat(new S2Contended().cases(false)).contains("S2/t2x4");
        assertThat(new S2Contended().cases(true)).contains("S2/t2x4");
        assertThat(report.text()).contains("Goals (issues 5, 12, 21 and 25)");
    }

    @Test
    void aReleaserAskingAgainShowsEachLibrarysShareOfHandOffsBesideItsGoal() {
        result("S3/w1cr", Library.RELOCK, Map.of(Metric.HANDOFF_P50_US, 200.0, Metric.HANDOFF_SHARE, 0.97),
                Map.of(Metric.HANDOFF_P50_US, 220.0, Metric.HANDOFF_SHARE, 0.97));
        result("S3/w1cr", Library.REDISSON, Map.of(Metric.HANDOFF_P50_US, 500.0, Metric.HANDOFF_SHARE, 0.44),
                Map.of(Metric.HANDOFF_P50_US, 400.0, Metric.HANDOFF_SHARE, 0.44));
        Report report = report();

        Goal reasking = goal("25", "S3/w1cr", Metric.HANDOFF_P50_US);
        assertThat(report.measured(reasking)).isCloseTo(210.0 / 450.0, within(1e-9));
        assertThat(reasking.holds(report.measured(reasking))).isTrue();
        assertThat(report.bestPeer("S3/w1cr", Metric.HANDOFF_SHARE)).as("no better direction").isNull();
        assertThat(report.text()).contains("0.47× Redisson (repeats 0.40×–0.55×); hand-offs/acquisition Relock 0.97,"
                + " Redisson 0.44");
    }

    @Test
    void handOffCaseIdsGiveTheirShape() {
        assertThat(S3HandOff.Shape.of("S3/w1c")).isEqualTo(new S3HandOff.Shape(1, S3HandOff.Placement.OWN_CLIENTS, false, false));
        assertThat(S3HandOff.Shape.of("S3/w8")).isEqualTo(new S3HandOff.Shape(8, S3HandOff.Placement.SAME_CLIENT, false, false));
        assertThat(S3HandOff.Shape.of("S3/w1j")).isEqualTo(new S3HandOff.Shape(1, S3HandOff.Placement.OTHER_JVM, false, false));
        S3HandOff.Shape longHolds = S3HandOff.Shape.of("S3/w1c5");
        assertThat(longHolds).isEqualTo(new S3HandOff.Shape(1, S3HandOff.Placement.OWN_CLIENTS, true, false));
        for (int i = 0; i < 1000; i++) {
            assertThat(longHolds.holdNanos()).isBetween(4_000_000L, 6_000_000L);
        }
        assertThat(S3HandOff.Shape.of("S3/w1cr")).isEqualTo(new S3HandOff.Shape(1, S3HandOff.Placement.OWN_CLIENTS, false, true));
        assertThat(S3HandOff.Shape.of("S3/w1cr").text()).isEqualTo("1 waiter on another client, the releaser asks again at once");
        assertThatThrownBy(() -> S3HandOff.Shape.of("S3/w1j5")).as("a parked thread of another JVM cannot be seen")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> S3HandOff.Shape.of("S3/w8j")).isInstanceOf(IllegalArgumentException.class);
        assertThat(new S3HandOff().cases(true)).contains("S3/w1c5", "S3/w1cr");
        for (Goal goal : Goal.ALL) {
            if (goal.caseId().startsWith("S3/")) {
                assertThat(new S3HandOff().cases(false)).as(goal.text()).contains(goal.caseId());
            }
        }
    }

    @Test
    void aCaseALibraryHasNothingForIsShownAsNotAvailableAndNeedsNoWorker() {
        assertThat(Bench.libraries(new S4FairAndRedLock(), List.of("S4/fair10", "S4/redlock")))
                .containsExactly(Library.RELOCK, Library.REDISSON);
        assertThat(Bench.libraries(new S3HandOff(), List.of("S3/w1j"))).containsExactly(Library.values());
        assertThat(Bench.libraries(new S1Uncontended(), List.of("S1/t64m"))).containsExactly(Library.RELOCK);
        assertThat(Bench.casesFor(new S5Footprint(), List.of("S5/footprint", "S5/watchdog"), Library.REGISTRY))
                .containsExactly("S5/footprint");
        result("S4/fair10", Library.RELOCK, Map.of(Metric.ACQUISITIONS_PER_S, 5000.0), Map.of(Metric.ACQUISITIONS_PER_S, 5200.0));
        result("S4/fair10", Library.REDISSON, Map.of(Metric.ACQUISITIONS_PER_S, 3000.0), Map.of(Metric.ACQUISITIONS_PER_S, 3100.0));
        runs.add(new Report.Run(0, Report.Run.NOT_RUN, Library.REGISTRY,
                new CaseResult("S4/fair10", "S4/fair10").unavailable("no fair lock").toJson(Library.REGISTRY)));
        Report report = report();

        assertThat(report.text()).containsPattern("acquisitions/s .* not available +Redisson +1\\.67×");
        assertThat(report.bars()).singleElement().satisfies(bar -> {
            assertThat(bar.label()).isEqualTo("S4 fair 10 waiters acq/s (vs Redisson)");
            assertThat(bar.advantage()).isCloseTo(5100.0 / 3050.0, within(1e-9));
        });
    }

    @Test
    void aMixedFleetRowShowsEachLibrarysOwnFiguresAndNoRatio() {
        assertThat(Bench.libraries(new S6MixedFleet(), List.of("S6/r4x2-s2x1", "S6/r2x1-s4x2")))
                .as("one worker, Relock's, with Redisson's clients beside it").containsExactly(Library.RELOCK);
        CaseResult relock = new CaseResult("S6/r4x2-s2x1", "mixed fleet, Relock 2×4 + Redisson 1×2")
                .metric(Metric.ACQUISITIONS_PER_S, 2200).metric(Metric.WAIT_MAX_MS, 180).check("overlaps", 0);
        relock.beside(Library.REDISSON, new CaseResult("S6/r4x2-s2x1", "mixed fleet, Relock 2×4 + Redisson 1×2")
                .metric(Metric.ACQUISITIONS_PER_S, 480).metric(Metric.WAIT_MAX_MS, 210));
        List<Map<String, Object>> jsons = relock.toJsons(Library.RELOCK);
        assertThat(jsons).extracting(json -> json.get("library")).containsExactly("relock", "redisson");
        for (int repeat = 0; repeat < 2; repeat++) {
            for (Map<String, Object> json : jsons) {
                runs.add(new Report.Run(repeat, 0, Library.fromId((String) json.get("library")), json));
            }
        }
        runs.add(new Report.Run(0, Report.Run.NOT_RUN, Library.REGISTRY, new CaseResult("S6/r4x2-s2x1", "S6/r4x2-s2x1")
                .unavailable("not part of the mixed fleet").toJson(Library.REGISTRY)));
        Report report = report();

        assertThat(report.bestPeer("S6/r4x2-s2x1", Metric.ACQUISITIONS_PER_S)).as("neither against the other").isNull();
        assertThat(report.text())
                .containsPattern("mixed fleet, Relock 2×4 \\+ Redisson 1×2 \\[S6/r4x2-s2x1\\] +acquisitions/s +2 200 \\(all\\)"
                        + " +480 \\(all\\) +—\n")
                .containsPattern(" +wait max ms +180 \\(all\\) +210 \\(all\\) +—\n")
                .contains("overlapping holders 0 and lost updates 0 in all 2 contended runs (S2, S4 fair, S6, S7)");
    }

    @Test
    void fleetGoalsReadTheWorstOfBothLibrariesInEveryRepeat() {
        // Redisson's second repeat is the worst wait; Relock's first the share furthest from equal (1 / 0.3).
        result("S6/r4x2-s2x1", Library.RELOCK, Map.of(Metric.WAIT_MAX_MS, 150.0, Metric.SHARE_OF_EQUAL, 0.3),
                Map.of(Metric.WAIT_MAX_MS, 170.0, Metric.SHARE_OF_EQUAL, 1.1));
        result("S6/r4x2-s2x1", Library.REDISSON, Map.of(Metric.WAIT_MAX_MS, 400.0, Metric.SHARE_OF_EQUAL, 2.9),
                Map.of(Metric.WAIT_MAX_MS, 2500.0, Metric.SHARE_OF_EQUAL, 0.8));
        result("S6/r2x1-s4x2", Library.RELOCK, Map.of(Metric.WAIT_MAX_MS, 20.0), Map.of(Metric.WAIT_MAX_MS, 30.0));
        Report report = report();

        Goal waits = goal("21", "S6/r4x2-s2x1", Metric.WAIT_MAX_MS);
        assertThat(report.measured(waits)).isEqualTo(2500.0);
        assertThat(waits.holds(report.measured(waits))).as("2.5 s > 2 s, though the medians hold").isFalse();
        Goal shares = goal("21", "S6/r4x2-s2x1", Metric.SHARE_OF_EQUAL);
        assertThat(report.measured(shares)).isCloseTo(1 / 0.3, within(1e-9));
        assertThat(shares.holds(report.measured(shares))).as("0.3 is within 4× of 1").isTrue();
        assertThat(shares.holds(1 / 0.2)).as("a share of 0.2, or 5, is 5× from equal").isFalse();

        result("S6/r2x1-s4x2", Library.RELOCK, Map.of(Metric.SHARE_OF_EQUAL, 1.5), Map.of(Metric.SHARE_OF_EQUAL, 1.4));
        result("S6/r2x1-s4x2", Library.REDISSON, Map.of(Metric.SHARE_OF_EQUAL, 0.0), Map.of(Metric.SHARE_OF_EQUAL, 0.0));
        Report starvedReport = report();
        Goal starved = goal("21", "S6/r2x1-s4x2", Metric.SHARE_OF_EQUAL);
        assertThat(starved.holds(starvedReport.measured(starved))).as("Redisson acquired nothing").isFalse();
        assertThat(starvedReport.text())
                .contains("a library acquired nothing; Relock 1.45 (1.40–1.50), Redisson 0.00 (all)");
        assertThat(shares.targetText()).startsWith("0.25–4×");
        Goal missing = goal("21", "S6/r2x1-s4x2", Metric.WAIT_MAX_MS);
        assertThat(report.measured(missing)).as("Redisson has no value: not measured").isNaN();
        assertThat(report.text()).containsPattern("✗ +#21 +mixed fleet: every thread of both libraries acquires within 2 s"
                + " \\[S6/r4x2-s2x1\\] .* worst 2 500; Relock 160 \\(150–170\\), Redisson 1 450 \\(400–2 500\\)");
    }

    @Test
    void theReactiveCaseIsReadInWordsWithTheRegistryNotAvailable() {
        assertThat(Bench.libraries(new S7Reactive(), List.of(S7Reactive.CASE)))
                .as("the registry has no reactive lock: no worker").containsExactly(Library.RELOCK, Library.REDISSON);
        result(S7Reactive.CASE, Library.RELOCK,
                Map.of(Metric.ACQUISITIONS_PER_S, 4000.0, Metric.WAIT_P99_US, 300_000.0, Metric.THREADS_USED, 20.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 4400.0, Metric.WAIT_P99_US, 320_000.0, Metric.THREADS_USED, 22.0));
        result(S7Reactive.CASE, Library.REDISSON,
                Map.of(Metric.ACQUISITIONS_PER_S, 1000.0, Metric.WAIT_P99_US, 1_900_000.0, Metric.THREADS_USED, 190.0),
                Map.of(Metric.ACQUISITIONS_PER_S, 1200.0, Metric.WAIT_P99_US, 2_100_000.0, Metric.THREADS_USED, 200.0));
        String noReactiveLock = new S7Reactive().without(S7Reactive.CASE, Library.REGISTRY);
        runs.add(new Report.Run(0, Report.Run.NOT_RUN, Library.REGISTRY,
                new CaseResult(S7Reactive.CASE, S7Reactive.CASE).unavailable(noReactiveLock).toJson(Library.REGISTRY)));
        Report report = report();

        assertThat(report.text())
                .containsPattern("JVM threads used +21 \\(20–22\\) +195 \\(190–200\\) +not available +Redisson"
                        + " +0\\.11×")
                .contains("Reactive [S7/s1000x4]: 1 000 subscriptions over 4 clients in flight on one lock name, ")
                .contains("Relock 4 200 acquisitions/s, wait p99 310 ms, 21 JVM threads used; Redisson 1 100 "
                        + "acquisitions/s, wait p99 2 000 ms, 195 JVM threads used; RedisLockRegistry not available "
                        + "(no reactive lock: its locks are java.util.concurrent.locks.Lock, held by the thread that "
                        + "called lock()).")
                .contains("Relock over Redisson: acquisitions/s 3.82× (3.67×–4.00×), wait p99 µs 0.16× (0.15×–0.16×), "
                        + "JVM threads used 0.11× (0.11×–0.11×).");
        assertThat(report.markdown("chart.png", "run")).contains("Reactive [S7/s1000x4]: ");
        assertThat(report.bars()).extracting(Report.Bar::label).containsExactly(
                "S7 reactive 1000 subs acq/s (vs Redisson)", "S7 reactive wait p99 (vs Redisson)",
                "S7 reactive JVM threads (vs Redisson)");
    }

    @Test
    void aMixedCaseIdGivesItsShape() {
        S6MixedFleet.Shape issue = S6MixedFleet.Shape.of("S6/r4x2-s2x1");
        assertThat(issue).isEqualTo(new S6MixedFleet.Shape(false, 4, 2, 2, 1));
        assertThat(issue.text()).isEqualTo("Relock 2×4 + Redisson 1×2");
        assertThat(issue.threadCount()).isEqualTo(10);
        assertThat(S6MixedFleet.Shape.of("S6/rw4x2-s2x1").writeLock()).isTrue();
        assertThat(S6MixedFleet.Shape.of("S6/r2x1-s4x2").text()).isEqualTo("Relock 1×2 + Redisson 2×4");
        assertThat(new S6MixedFleet().cases(true)).containsExactly("S6/r4x2-s2x1");
    }

    private static Goal goal(String issue, String caseId, Metric metric) {
        return Goal.ALL.stream().filter(goal -> goal.issue().equals(issue) && goal.caseId().equals(caseId)
                && goal.metric() == metric).findFirst().orElseThrow();
    }

    /** One case's metrics for one library in repeats 1 and 2. */
    private void result(String caseId, Library library, Map<Metric, Double> first, Map<Metric, Double> second) {
        List<Map<Metric, Double>> repeats = List.of(first, second);
        for (int repeat = 0; repeat < repeats.size(); repeat++) {
            CaseResult result = new CaseResult(caseId, "title of " + caseId);
            repeats.get(repeat).forEach(result::metric);
            runs.add(new Report.Run(repeat, 0, library, result.toJson(library)));
        }
    }

    private Report report() {
        Options options = Options.parse("--repeats", "2");
        Map<String, Object> none = new LinkedHashMap<>();
        Environment environment = new Environment(ZonedDateTime.now(), Bench.COMMAND, none, none);
        return new Report(options, environment, runs, ceiling, "test", 1);
    }
}
