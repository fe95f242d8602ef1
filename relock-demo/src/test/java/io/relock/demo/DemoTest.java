package io.relock.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;

class DemoTest {

    /** What one call of {@link Demo#run} printed and returned. */
    private record Outcome(int exitCode, String out, String err) {}

    private static Outcome runDemo(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = Demo.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Scenario 4's part (b): one run in every period. */
    private static final String ONCE_PER_PERIOD_WITH_HOLD =
            "\\(b\\) unlock\\(holdAtLeast 900 ms\\) \\.+ runs per period \\[1( 1)+\\]: 0 duplicate runs";

    @Test
    void everyScenarioPassesAgainstARealRedisAndLeavesNoKeysBehind() {
        try (RedisServer server = RedisServer.start()) {
            server.command("SET", "someone-else:key", "untouched");

            Outcome demo = runDemo("--redis", server.uri());

            assertThat(demo.exitCode()).as("exit code; report:%n%s%nstderr:%n%s", demo.out(), demo.err())
                    .isEqualTo(Demo.EXIT_PASSED);
            assertThat(demo.out())
                    .contains("1. " + TryLockRace.TITLE)
                    .contains("2a. " + RechargeRace.TITLE)
                    .contains("2b. " + FencedRecharge.TITLE)
                    .contains("2c. " + DatabaseLease.TITLE)
                    .containsPattern("child's commit \\.+ rolled back: ")
                    .contains("3a. " + ForgottenUnlock.TITLE)
                    .contains("3b. " + LeaseShorterThanWork.TITLE)
                    .contains("3c. " + WatchdogOnly.TITLE)
                    .contains("4. " + OneNodeJob.TITLE)
                    .containsPattern("\\(a\\) tryLock\\(0\\), unlock\\(\\) \\.+ runs per period \\[.*\\]: [1-9]")
                    .containsPattern(ONCE_PER_PERIOD_WITH_HOLD)
                    .containsPattern("\\(c\\) leader election \\.+ runs per period \\[.*\\]: 0 duplicate runs")
                    .containsPattern("old leader's runs, old term \\.+ 0 after the freeze")
                    .containsPattern("onRevoked for term (\\d+), older than \\d+")
                    .containsPattern("3\\) @WithLock \\.+ credited exactly once \\(balance 100\\) in "
                            + Demo.RECHARGE_ROUNDS + " of " + Demo.RECHARGE_ROUNDS + " rounds")
                    .containsPattern("4\\) @WithLock on Mono \\(R2DBC\\) \\.+ credited exactly once"
                            + " \\(balance 100\\) in " + Demo.RECHARGE_ROUNDS + " of " + Demo.RECHARGE_ROUNDS + " rounds")
                    .containsPattern("rows updated \\.+ 0: rejected, the order carries token \\d+")
                    .contains("Summary: 8 of 8 scenarios passed")
                    .doesNotContain("FAIL");
            assertThat(count(demo.out(), "^   PASS  ")).isEqualTo(8);
            assertThat(server.command("KEYS", "*")).isEqualTo(List.of("someone-else:key"));
        }
    }

    @Test
    void wrongCredentialsAreReportedWithoutThePassword() {
        try (RedisServer server = RedisServer.start()) {
            Outcome demo = runDemo("--redis", "redis://" + "nobody:secret@127.0.0.1:" + server.port());

            // The server has no such user: the demo cannot authenticate, says so, and hides the password.
            assertThat(demo.exitCode()).isEqualTo(Demo.EXIT_FAILED);
            assertThat(demo.err()).startsWith("relock-demo: cannot run the demo:");
            assertThat(demo.out() + demo.err()).doesNotContain("secret");
        }
    }

    @Test
    void unreachableRedisIsReportedWithExitCode1() {
        int port;
        try (RedisServer server = RedisServer.start()) {
            port = server.port();
        }

        Outcome demo = runDemo("--redis", "redis://127.0.0.1:" + port);

        assertThat(demo.exitCode()).isEqualTo(Demo.EXIT_FAILED);
        assertThat(demo.err()).startsWith("relock-demo: cannot run the demo:");
        assertThat(demo.out()).isEmpty();
    }

    @Test
    void badArgumentsPrintUsageOnStderrAndExitWith2() {
        assertThat(runDemo("--redis")).satisfies(demo -> {
            assertThat(demo.exitCode()).isEqualTo(Demo.EXIT_USAGE);
            assertThat(demo.err()).contains("--redis needs a URI").contains("Usage:");
            assertThat(demo.out()).isEmpty();
        });
        assertThat(runDemo("--redis", "localhost:6379").err()).contains("redis:// or rediss://");
        assertThat(runDemo("--verbose").err()).contains("unknown argument: '--verbose'");
        assertThat(runDemo("--redis", "redis://a:1", "--redis=redis://b:2").err()).contains("--redis given twice");
    }

    @Test
    void helpPrintsUsageOnStdout() {
        Outcome demo = runDemo("--help");

        assertThat(demo.exitCode()).isEqualTo(Demo.EXIT_PASSED);
        assertThat(demo.out()).startsWith("Usage:");
        assertThat(demo.err()).isEmpty();
    }

    @Test
    void passwordsAreRedacted() {
        assertThat(CommandLine.redact("redis://user:secret@host:6379/0")).isEqualTo("redis://user:***@host:6379/0");
        assertThat(CommandLine.redact("rediss://secret@host:6380")).isEqualTo("rediss://:***@host:6380");
        assertThat(CommandLine.redact("redis://host:6379")).isEqualTo("redis://host:6379");
    }

    /** Rounds of the recharge race when the test runs the recharge scenarios alone. */
    private static final int ROUNDS = 3;

    /**
     * The recharge scenarios on a database given with {@code --jdbc}, as a user's PostgreSQL or
     * MariaDB would be: here an H2 served over TCP on loopback by the test, with a password and a
     * table of its own that the demo must leave alone.
     */
    @Test
    void onAGivenDatabaseWithLockCreditsOnceTheFencedLateWriteIsRejectedAndTheTablesAreDropped() throws Exception {
        Server h2 = Server.createTcpServer("-tcpPort", "0").start();
        // The first connection creates the in-memory database and its admin user.
        try (RedisServer server = RedisServer.start();
                Connection owner = DriverManager.getConnection("jdbc:h2:mem:shop;DB_CLOSE_DELAY=-1", "shop", "secret")) {
            try (Statement statement = owner.createStatement()) {
                statement.execute("CREATE TABLE customer (id INT PRIMARY KEY)");
            }
            // A generous lock timeout: run 1 queues ten updates of one row, on a machine that may be busy.
            String url = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:shop;LOCK_TIMEOUT=10000";
            CommandLine commandLine = CommandLine.parse("--redis", server.uri(), "--jdbc", url,
                    "--jdbc-user", "shop", "--jdbc-password", "secret");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Report report = new Report(new PrintStream(out, true, StandardCharsets.UTF_8));

            try (DemoRedis redis = DemoRedis.connect(server.uri());
                    RechargeDatabase database = RechargeDatabase.open(commandLine, redis.runId())) {
                assertThat(tables(owner)).contains(database.tables().account().toUpperCase(),
                        database.tables().orders().toUpperCase());
                assertThat(database.commitLatency()).isZero();
                run(report, "2a", new RechargeRace(redis, database, ROUNDS));
                run(report, "2b", new FencedRecharge(redis, database));
                database.dropTables();
            }

            String text = out.toString(StandardCharsets.UTF_8);
            assertThat(report.allPassed()).as("report:%n%s", text).isTrue();
            assertThat(text)
                    .containsPattern("3\\) @WithLock \\.+ credited exactly once \\(balance 100\\) in " + ROUNDS + " of "
                            + ROUNDS + " rounds")
                    // R2DBC reaches only the demo's own H2: the reactive run is skipped, and says why.
                    .containsPattern("4\\) @WithLock on Mono \\(R2DBC\\) \\.+ skipped: it needs the demo's own H2;"
                            + " the demo carries no R2DBC driver for the database given with --jdbc \\(H2 ")
                    .containsPattern("rows updated \\.+ 0: rejected, the order carries token \\d+")
                    .contains("balance afterwards ............... 100 (should be 100)")
                    .doesNotContain("secret");
            assertThat(tables(owner)).containsExactly("CUSTOMER");
            try (Statement statement = owner.createStatement()) {
                statement.execute("SHUTDOWN");
            }
        } finally {
            h2.stop();
        }
    }

    @Test
    void jdbcArgumentsAreCheckedAndTheirSecretsRedacted() {
        assertThat(CommandLine.parse("--jdbc=jdbc:postgresql://db:5432/shop", "--jdbc-user", "u").jdbcUser())
                .isEqualTo("u");
        assertThat(CommandLine.parse()).satisfies(line -> assertThat(line.jdbcUrl()).isNull());
        assertThat(parseError("--jdbc", "jdbc:oracle:thin:@db:1521/shop")).contains("jdbc:postgresql:");
        assertThat(parseError("--jdbc", "jdbc:postgresql://db/shop?password=secret", "--jdbc", "jdbc:mariadb://x"))
                .isEqualTo("--jdbc given twice");
        assertThat(parseError("--jdbc-password", "secret")).isEqualTo("--jdbc-user and --jdbc-password need --jdbc");
        assertThat(parseError("--jdbc")).isEqualTo("--jdbc needs a URL");
        assertThat(CommandLine.redactJdbc("jdbc:postgresql://db:5432/shop?user=u&password=secret"))
                .isEqualTo("jdbc:postgresql://db:5432/shop (parameters not shown)");
        assertThat(CommandLine.redactJdbc("jdbc:mariadb://u:secret@db/shop")).isEqualTo("jdbc:mariadb://u:***@db/shop");
    }

    private static String parseError(String... args) {
        try {
            CommandLine.parse(args);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        throw new AssertionError("accepted " + List.of(args));
    }

    private static void run(Report report, String number, Scenario scenario) throws Exception {
        scenario.run(report.begin(number, scenario.title(), scenario.whatItShows()));
    }

    private static List<String> tables(Connection connection) throws Exception {
        List<String> names = new ArrayList<>();
        try (ResultSet rows = connection.createStatement().executeQuery(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'PUBLIC' ORDER BY table_name")) {
            while (rows.next()) {
                names.add(rows.getString(1));
            }
        }
        return names;
    }

    private static int count(String text, String regex) {
        Matcher matcher = Pattern.compile(regex, Pattern.MULTILINE).matcher(text);
        int count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }
}
