package io.relock.bench;

import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The bench command: Relock beside its peers, Redisson and Spring Integration's
 * RedisLockRegistry, on one redis-server that it starts itself, in one run.
 *
 * <p>For every scenario, library and repeat it starts a fresh worker JVM ({@link Worker}, same
 * flags and classpath for every library), alternating the order of the libraries between
 * repeats; a case a library has nothing for ({@link Scenario#without}) is reported as not
 * available without running it, and a library left with no case gets no worker.
 * Between workers the servers are flushed and their statistics reset. At the end it
 * prints the table and the goals, and writes {@code <out>/<yyyy-MM-dd-HHmm>/results.json},
 * {@code table.txt} and {@code chart.png}, and {@code <out>/latest.md}.
 *
 * <p>Exit code 0 when every case ran cleanly (goals missed are information, not failures),
 * 1 when a case failed or mutual exclusion was violated, 2 for bad flags.
 */
public final class Bench {

    static final String COMMAND = "mvn -q -B -Pbench -DskipTests verify";
    static final int REDLOCK_MASTERS = 5;
    /** Per case, beyond its warm-up, window and counting phase: client set-up, slow releases, JVM start. */
    private static final Duration CASE_SLACK = Duration.ofSeconds(90);
    /**
     * For the estimate printed at the start: a worker JVM's start and end, a case's clients, and
     * an S5 case (its own phases: 10 000 locks to take, MONITOR, a window).
     */
    private static final double WORKER_START_SECONDS = 1.5;
    private static final double CASE_SET_UP_SECONDS = 0.3;
    private static final double S5_CASE_SECONDS = 7;

    private Bench() {
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            if (e.getMessage().equals("help")) {
                System.out.println(Options.USAGE);
                System.exit(0);
            }
            System.err.println(e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        try {
            Outcome outcome = run(options, String.join(" ", args).trim(), System.out);
            System.exit(outcome.clean() ? 0 : 1);
        } catch (IOException | RuntimeException e) {
            System.err.println("the bench failed: " + Diagnostics.stackTrace(e));
            System.exit(1);
        }
    }

    /** What a run produced: its report and where the files went. */
    record Outcome(Report report, Path directory) {

        boolean clean() {
            return report.errors().isEmpty() && report.dirty().isEmpty();
        }
    }

    /**
     * Runs the bench as {@code options} say and writes its files.
     *
     * @param flags the flags as given, for the record of the command
     */
    static Outcome run(Options options, String flags, PrintStream out) throws IOException {
        long started = System.nanoTime();
        ZonedDateTime start = ZonedDateTime.now();
        String command = flags.isEmpty() ? COMMAND : COMMAND + " -Dbench.args=\"" + flags + "\"";
        if (options.repeats() < 2) {
            out.println("note: with --repeats 1 there is no spread; the issue asks for at least 2");
        }
        List<RedisServer> masters = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            if (options.runs("S4/redlock") || options.runs("S4/redlock-wan")) {
                for (int i = 0; i < REDLOCK_MASTERS; i++) {
                    masters.add(RedisServer.start());
                }
            }
            Environment environment = Environment.describe(start, command, server);
            out.println("Relock bench: " + server + (masters.isEmpty() ? "" : ", plus " + masters.size()
                    + " masters for RedLock") + "; " + estimate(options));

            List<S0Ceiling.Row> ceiling = new ArrayList<>();
            String ceilingNote = ceiling(options, server, ceiling, out);
            List<Report.Run> runs = workers(options, server, masters, out);

            double elapsed = (System.nanoTime() - started) / 1e9;
            Report report = new Report(options, environment, runs, ceiling, ceilingNote, elapsed);
            Path directory = write(report, options.out(), start);
            out.println();
            out.print(report.text());
            out.println();
            out.println("files: " + directory.toAbsolutePath().normalize() + " (results.json, table.txt, chart.png) and "
                    + options.out().resolve("latest.md").toAbsolutePath().normalize());
            out.printf(Locale.ROOT, "time: %.1f min%n", (System.nanoTime() - started) / 60e9);
            return new Outcome(report, directory);
        } finally {
            masters.forEach(RedisServer::close);
        }
    }

    private static String ceiling(Options options, RedisServer server, List<S0Ceiling.Row> rows, PrintStream out)
            throws IOException {
        if (!options.scenarios().contains("S0")) {
            return "S0 not selected";
        }
        Path benchmark = S0Ceiling.locate(RedisBinary.locate().path());
        String note = benchmark != null ? "redis-benchmark: " + benchmark
                : "S0's redis-benchmark part skipped: redis-benchmark was not found on PATH nor next to "
                        + RedisBinary.locate().path() + " (install Redis's tools to see the ceiling)";
        if (benchmark == null) {
            out.println(note);
        }
        for (int repeat = 0; repeat < options.repeats(); repeat++) {
            // Half a window per test: the ceiling is a reference line, not a comparison.
            if (benchmark != null) {
                out.println("[S0] redis-benchmark, repeat " + (repeat + 1));
                rows.addAll(S0Ceiling.run(benchmark, server, options.window().dividedBy(2), repeat));
            }
            out.println("[S0] the JVM client's floor (Lettuce, no lock library), repeat " + (repeat + 1));
            try {
                rows.addAll(JvmFloor.run(server, options.window().dividedBy(2), repeat));
            } catch (Exception e) {
                throw new IOException("the JVM floor could not be measured", e);
            }
        }
        return note;
    }

    private static List<Report.Run> workers(Options options, RedisServer server, List<RedisServer> masters,
            PrintStream out) {
        List<Report.Run> runs = new ArrayList<>();
        int total = 0;
        for (Scenario scenario : Scenario.all()) {
            total += libraries(scenario, cases(scenario, options)).size() * options.repeats();
        }
        int number = 0;
        for (Scenario scenario : Scenario.all()) {
            List<String> cases = cases(scenario, options);
            for (Library library : Library.values()) {
                for (String caseId : cases) {
                    String without = scenario.without(caseId, library);
                    if (without != null && !scenario.beside(caseId).contains(library)) {
                        out.println("[" + caseId + "] " + library.displayName() + " not run: " + without);
                        CaseResult skipped = new CaseResult(caseId, caseId).unavailable(without);
                        runs.add(new Report.Run(0, Report.Run.NOT_RUN, library, skipped.toJson(library)));
                    }
                }
            }
            List<Library> libraries = libraries(scenario, cases);
            for (int repeat = 0; repeat < options.repeats(); repeat++) {
                List<Library> order = new ArrayList<>(libraries);
                if (repeat % 2 == 1) {
                    Collections.reverse(order);
                }
                for (int position = 0; position < order.size(); position++) {
                    Library library = order.get(position);
                    number++;
                    out.printf(Locale.ROOT, "[%d/%d] %s %s, repeat %d%n", number, total, scenario.id(),
                            library.displayName(), repeat + 1);
                    long started = System.nanoTime();
                    runs.addAll(runWorker(options, scenario, casesFor(scenario, cases, library), library, repeat,
                            position, server, masters, out));
                    out.printf(Locale.ROOT, "    (%.1f s)%n", (System.nanoTime() - started) / 1e9);
                }
            }
        }
        return runs;
    }

    /**
     * The libraries that run some of {@code cases} of {@code scenario}, in the order of the first
     * repeat (later repeats alternate it).
     */
    static List<Library> libraries(Scenario scenario, List<String> cases) {
        return Arrays.stream(Library.values()).filter(library -> !casesFor(scenario, cases, library).isEmpty()).toList();
    }

    /** Those of {@code cases} that {@code library} runs. */
    static List<String> casesFor(Scenario scenario, List<String> cases, Library library) {
        return cases.stream().filter(caseId -> scenario.without(caseId, library) == null).toList();
    }

    private static List<String> cases(Scenario scenario, Options options) {
        if (!options.scenarios().contains(scenario.id())) {
            return List.of();
        }
        return scenario.cases(options.quick()).stream().filter(options::runs).toList();
    }

    private static List<Report.Run> runWorker(Options options, Scenario scenario, List<String> cases, Library library,
            int repeat, int position, RedisServer server, List<RedisServer> masters, PrintStream out) {
        server.flushAll();
        server.command("CONFIG", "RESETSTAT");
        for (RedisServer master : masters) {
            master.flushAll();
            master.command("CONFIG", "RESETSTAT");
        }
        List<String> args = new ArrayList<>(List.of("--library", library.id(), "--scenario", scenario.id(),
                "--uri", server.uri(),
                "--warmup-ms", Long.toString(options.warmup().toMillis()),
                "--window-ms", Long.toString(options.window().toMillis()),
                "--count-ms", Long.toString(options.count().toMillis()),
                "--heap", options.heap(),
                "--cases", String.join(",", scenario.order(cases, repeat))));
        if (!masters.isEmpty()) {
            args.add("--masters");
            args.add(String.join(",", masters.stream().map(RedisServer::uri).toList()));
        }
        if (options.quick()) {
            args.add("--quick");
        }
        Duration perCase = options.warmup().plus(options.window()).plus(options.count()).plus(CASE_SLACK);
        Duration limit = perCase.multipliedBy(cases.size()).plus(Duration.ofSeconds(60));

        WorkerProcess.Output output = WorkerProcess.run(args, options.heap(), limit,
                result -> out.println("    " + summary(result)));
        List<Report.Run> runs = new ArrayList<>();
        Set<String> reported = new HashSet<>();
        for (Map<String, Object> result : output.results()) {
            // A case with other libraries beside the worker's (S6) reports each as its own.
            runs.add(new Report.Run(repeat, position, Library.fromId((String) result.get("library")), result));
            reported.add((String) result.get("case"));
        }
        if (output.problem() != null) {
            String stderr = String.join("\n", WorkerProcess.stderrTail(output.stderr()));
            for (String caseId : cases) {
                if (!reported.contains(caseId)) {
                    CaseResult missing = new CaseResult(caseId, caseId)
                            .error(output.problem() + (stderr.isEmpty() ? "" : "\nworker stderr:\n" + stderr));
                    runs.add(new Report.Run(repeat, position, library, missing.toJson(library)));
                }
            }
            out.println("    ! " + output.problem().lines().findFirst().orElse(""));
        }
        for (String line : WorkerProcess.stderrTail(output.stderr())) {
            out.println("    | " + line);
        }
        return runs;
    }

    /** One line per case while the bench runs. */
    private static String summary(Map<String, Object> result) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-13s", result.get("case")));
        if (S6MixedFleet.isMixed((String) result.get("case"))) {
            line.append(' ').append(Library.fromId((String) result.get("library")).displayName()).append(':');
        }
        if (result.get("unavailable") != null) {
            return line.append(" not available: ").append(result.get("unavailable")).toString();
        }
        int shown = 0;
        for (Map.Entry<String, Object> entry : Json.object(result.get("metrics")).entrySet()) {
            if (shown++ == 4) {
                break;
            }
            Metric metric = Metric.fromKey(entry.getKey());
            line.append(shown == 1 ? " " : " · ").append(metric.label()).append(' ')
                    .append(metric.format(((Number) entry.getValue()).doubleValue()));
        }
        Map<String, Object> checks = Json.object(result.get("checks"));
        if (checks.values().stream().anyMatch(value -> ((Number) value).longValue() != 0)) {
            line.append(" · CHECKS FAILED ").append(checks);
        }
        if (result.get("error") != null) {
            line.append(" · ERROR: ").append(((String) result.get("error")).lines().findFirst().orElse(""));
        }
        return line.toString();
    }

    private static String estimate(Options options) {
        double seconds = 0;
        for (Scenario scenario : Scenario.all()) {
            List<String> cases = cases(scenario, options);
            for (Library library : libraries(scenario, cases)) {
                seconds += options.repeats() * WORKER_START_SECONDS;
                for (String caseId : casesFor(scenario, cases, library)) {
                    Load.Timing timing = scenario.timing(caseId, options.timing());
                    seconds += options.repeats() * (scenario.id().equals("S5") ? S5_CASE_SECONDS
                            : (timing.warmup().toMillis() + timing.window().toMillis() + timing.count().toMillis()) / 1000.0
                                    + CASE_SET_UP_SECONDS);
                }
            }
        }
        if (options.scenarios().contains("S0")) {
            seconds += options.repeats() * 4 * (options.window().toMillis() / 2000.0 + 0.5);
        }
        return String.format(Locale.ROOT, "about %.0f min", Math.max(1, Math.ceil(seconds / 60)));
    }

    /** Writes the run's directory and {@code latest.md}; returns the directory. */
    static Path write(Report report, Path out, ZonedDateTime start) throws IOException {
        String stamp = start.format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm", Locale.ROOT));
        Path directory = out.resolve(stamp);
        for (int suffix = 2; Files.exists(directory); suffix++) {
            directory = out.resolve(stamp + "-" + suffix);
        }
        Files.createDirectories(directory);
        String name = directory.getFileName().toString();
        Files.writeString(directory.resolve("results.json"), Json.pretty(report.json()), StandardCharsets.UTF_8);
        Files.writeString(directory.resolve("table.txt"), report.text(), StandardCharsets.UTF_8);
        Chart.write(report.bars(), "Medians of the repeats; bars above 1× are where Relock is better. Run " + name,
                directory.resolve("chart.png"));
        Files.writeString(out.resolve("latest.md"), report.markdown(name + "/chart.png", name), StandardCharsets.UTF_8);
        return directory;
    }
}
