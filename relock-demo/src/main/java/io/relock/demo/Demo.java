package io.relock.demo;

import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisServer;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A runnable tour of the seed articles' scenarios against a real Redis, with a readable report
 * on standard output:
 * <ol>
 *   <li>1000 threads race for one lock with {@code tryLock()};</li>
 *   <li>seed 000's order recharge as a Spring service on a SQL database: (a) ten concurrent
 *       retries on three service instances, with no lock, with the seed's lock inside the
 *       transaction, and with {@code @WithLock}; (b) a holder paused past its lease, whose late
 *       write the database refuses by its fencing token;</li>
 *   <li>three experiments with the watchdog: (a) no lease and no unlock, (b) a lease shorter
 *       than the work, (c) a wait and no lease, the correct use;</li>
 *   <li>one node does it: a job that must run once per period on three instances, with a plain
 *       lock (duplicates), with {@code unlock(holdAtLeast)}, and with leader election, whose
 *       leader is frozen with SIGSTOP past its lease and resumed.</li>
 * </ol>
 *
 * <p>Without {@code --redis} it starts a {@code redis-server} of its own (the testkit's, found on
 * {@code PATH} or shipped in a jar) and stops it at the end. With {@code --redis <uri>} it uses
 * that server, writes only keys under a random per-run prefix, and deletes them at the end.
 * The recharge scenarios use an H2 database in memory, or with {@code --jdbc <url>} the user's
 * PostgreSQL or MariaDB, where they create tables under a per-run prefix and drop them at the end.
 *
 * <p>Exit codes: 0 when every scenario passed, 1 when one failed or Redis or the database could not be used,
 * 2 for bad arguments (usage on standard error).
 */
public final class Demo {

    /** Exit code when every scenario passed. */
    public static final int EXIT_PASSED = 0;

    /** Exit code when a scenario failed or the demo could not run. */
    public static final int EXIT_FAILED = 1;

    /** Exit code for bad arguments. */
    public static final int EXIT_USAGE = 2;

    /** The lease in the watchdog experiments: short, so that three leases pass in seconds. */
    static final Duration EXPERIMENT_WATCHDOG_TIMEOUT = Duration.ofSeconds(1);

    /** Rounds of ten retries per run of the recharge race: the lock-inside-the-transaction window is narrow. */
    static final int RECHARGE_ROUNDS = 20;

    private Demo() {}

    /**
     * Runs the demo and exits with its exit code.
     *
     * @param args see {@link CommandLine#USAGE}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the demo: parses {@code args}, prints the report to {@code out} and problems to
     * {@code err}, and returns the exit code instead of exiting.
     *
     * @param args see {@link CommandLine#USAGE}
     * @param out where the report goes
     * @param err where usage and errors go
     * @return {@link #EXIT_PASSED}, {@link #EXIT_FAILED} or {@link #EXIT_USAGE}
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine commandLine;
        try {
            commandLine = CommandLine.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("relock-demo: " + e.getMessage());
            err.println(CommandLine.USAGE);
            return EXIT_USAGE;
        }
        if (commandLine.help()) {
            out.println(CommandLine.USAGE);
            return EXIT_PASSED;
        }
        try {
            return commandLine.redisUri() == null
                    ? tourOnOwnServer(commandLine, out)
                    : tour(commandLine.redisUri(), null, commandLine, out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("relock-demo: interrupted");
            return EXIT_FAILED;
        } catch (RuntimeException e) {
            err.println("relock-demo: cannot run the demo: " + Report.describe(e));
            return EXIT_FAILED;
        }
    }

    private static int tourOnOwnServer(CommandLine commandLine, PrintStream out) throws InterruptedException {
        RedisBinary binary = RedisBinary.locate();
        try (RedisServer server = RedisServer.start()) {
            String origin = "started for this run on " + server.uri() + " (binary from " + binary.source() + ": "
                    + binary.path() + "); stopped at the end";
            return tour(server.uri(), origin, commandLine, out);
        }
    }

    /**
     * Runs every scenario against the Redis at {@code uri}.
     *
     * @param origin where that Redis comes from, or {@code null} when the user gave it
     */
    private static int tour(String uri, String origin, CommandLine commandLine, PrintStream out)
            throws InterruptedException {
        long start = System.nanoTime();
        Report report = new Report(out);
        String cleanup;
        try (DemoRedis redis = DemoRedis.connect(uri);
                RechargeDatabase database = RechargeDatabase.open(commandLine, redis.runId())) {
            report.line("Relock demo: the seed articles' scenarios against a real Redis");
            report.fact("Redis", "redis-server " + redis.serverVersion() + " "
                    + (origin != null ? origin : "at " + CommandLine.redact(uri) + " (given with --redis)"));
            report.fact("SQL", database.description());
            report.fact("Run", redis.runId() + ": every key is under " + redis.keyPrefix()
                    + " and every table under relock_demo_" + redis.runId() + "_; both are deleted at the end");
            List<String> dropped;
            try {
                for (Map.Entry<String, Scenario> step : scenarios(redis, database).entrySet()) {
                    runScenario(report, step.getKey(), step.getValue());
                }
            } finally {
                dropped = database.dropTables();
            }
            cleanup = describeCleanup(redis.deleteRunKeys(), redis.keyPrefix(), dropped);
        }
        report.summary(Duration.ofNanos(System.nanoTime() - start), cleanup);
        return report.allPassed() ? EXIT_PASSED : EXIT_FAILED;
    }

    private static Map<String, Scenario> scenarios(DemoRedis redis, RechargeDatabase database) {
        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        scenarios.put("1", new TryLockRace(redis));
        scenarios.put("2a", new RechargeRace(redis, database, RECHARGE_ROUNDS));
        scenarios.put("2b", new FencedRecharge(redis, database));
        scenarios.put("2c", new DatabaseLease());
        scenarios.put("3a", new ForgottenUnlock(redis, EXPERIMENT_WATCHDOG_TIMEOUT));
        scenarios.put("3b", new LeaseShorterThanWork(redis, EXPERIMENT_WATCHDOG_TIMEOUT));
        scenarios.put("3c", new WatchdogOnly(redis, EXPERIMENT_WATCHDOG_TIMEOUT));
        scenarios.put("4", new OneNodeJob(redis));
        return scenarios;
    }

    /** Runs one scenario in its own section; an exception becomes a FAIL, not the end of the tour. */
    private static void runScenario(Report report, String number, Scenario scenario) throws InterruptedException {
        Report.Section section = report.begin(number, scenario.title(), scenario.whatItShows());
        try {
            scenario.run(section);
            if (!section.decided()) {
                section.fail("the scenario ended without a verdict");
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            if (!section.decided()) {
                section.fail("unexpected " + e);
            }
        }
    }

    private static String describeCleanup(List<String> deletedKeys, String prefix, List<String> droppedTables) {
        // Locks delete their keys on unlock; a fenced lock's token counter stays, it never expires.
        int keys = deletedKeys.size();
        return "Cleanup: deleted " + keys + (keys == 1 ? " key" : " keys") + " left behind by locks (" + prefix + "* and {"
                + prefix + "*); dropped tables " + String.join(", ", droppedTables) + ".";
    }
}
