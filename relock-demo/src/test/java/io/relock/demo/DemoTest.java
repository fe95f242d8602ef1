package io.relock.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
                    .contains("3a. " + ForgottenUnlock.TITLE)
                    .contains("3b. " + LeaseShorterThanWork.TITLE)
                    .contains("3c. " + WatchdogOnly.TITLE)
                    .contains("Summary: 6 of 6 scenarios passed")
                    .doesNotContain("FAIL");
            assertThat(count(demo.out(), "^   PASS  ")).isEqualTo(6);
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

    private static int count(String text, String regex) {
        Matcher matcher = Pattern.compile(regex, Pattern.MULTILINE).matcher(text);
        int count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }
}
