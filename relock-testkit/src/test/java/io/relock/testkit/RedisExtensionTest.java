package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs small test classes (the static nested "scenarios", which surefire does not run on its
 * own) through the JUnit launcher, so the extension's whole lifecycle — including what happens
 * after the last test — can be checked.
 */
class RedisExtensionTest {

    @Test
    void perClassSharesOneServerRestoresItBeforeEachTestAndStopsItAfterTheClass() {
        PerClassScenario.servers.clear();

        TestExecutionSummary summary = run(PerClassScenario.class);

        assertThat(summary.getTotalFailureCount()).as(failures(summary)).isZero();
        assertThat(summary.getTestsSucceededCount()).isEqualTo(5);
        assertThat(PerClassScenario.servers).hasSize(5).containsOnly(PerClassScenario.servers.get(0));
        RedisServer server = PerClassScenario.servers.get(0);
        assertThat(server.isRunning()).isFalse();
        assertThat(server.directory()).doesNotExist();
    }

    @Test
    void perTestGivesEachTestAFreshServerAndStopsIt() {
        PerTestScenario.pids.clear();

        TestExecutionSummary summary = run(PerTestScenario.class);

        assertThat(summary.getTotalFailureCount()).as(failures(summary)).isZero();
        assertThat(summary.getTestsSucceededCount()).isEqualTo(2);
        assertThat(PerTestScenario.pids).hasSize(2).doesNotHaveDuplicates();
        assertThat(PerTestScenario.pids).noneMatch(ProcessAssertions::isAlive);
    }

    @Test
    void perClassOnAnInstanceFieldIsReportedAsAConfigurationError() {
        TestExecutionSummary summary = run(InstanceFieldScenario.class);

        assertThat(summary.getTestsFailedCount()).isEqualTo(1);
        assertThat(summary.getFailures().get(0).getException())
                .isInstanceOf(ExtensionConfigurationException.class)
                .hasMessageContaining("static field");
    }

    @Test
    void perTestServerIsNotAvailableInBeforeAll() {
        TestExecutionSummary summary = run(PerTestBeforeAllScenario.class);

        assertThat(summary.getTotalFailureCount()).isEqualTo(1);
        assertThat(summary.getFailures().get(0).getException())
                .isInstanceOf(ParameterResolutionException.class)
                .hasMessageContaining("during each test");
    }

    private static TestExecutionSummary run(Class<?> testClass) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        return listener.getSummary();
    }

    private static String failures(TestExecutionSummary summary) {
        StringWriter text = new StringWriter();
        summary.printFailuresTo(new PrintWriter(text), 20);
        return text.toString();
    }

    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class PerClassScenario {

        @RegisterExtension
        static final RedisExtension redis = RedisExtension.perClass();

        static final List<RedisServer> servers = new CopyOnWriteArrayList<>();
        private static int port;

        private final RedisServer constructorServer;

        PerClassScenario(RedisServer server) {
            this.constructorServer = server;
        }

        @BeforeAll
        static void rememberPort(RedisServer server) {
            port = server.port();
        }

        @BeforeEach
        void record(RedisServer server) {
            assertThat(server).isSameAs(constructorServer).isSameAs(redis.server());
            assertThat(server.port()).isEqualTo(port);
            servers.add(server);
        }

        @Test
        @Order(1)
        void firstTestWritesAndKills(RedisServer server) {
            server.command("SET", "left", "over");
            server.kill();
        }

        @Test
        @Order(2)
        void killedServerIsRestartedOnTheSamePort(RedisServer server) {
            assertThat(server.isRunning()).isTrue();
            assertThat(server.command("DBSIZE")).isEqualTo(0L);
            server.command("SET", "left", "over");
            server.pause();
        }

        @Test
        @Order(3)
        void pausedServerIsResumedAndFlushed(RedisServer server) {
            assertThat(server.isPaused()).isFalse();
            assertThat(server.command(Duration.ofSeconds(2), "DBSIZE")).isEqualTo(0L);
            server.command("SET", "left", "over");
            server.stop();
        }

        @Test
        @Order(4)
        void stoppedServerIsRestarted(RedisServer server) {
            assertThat(server.command("DBSIZE")).isEqualTo(0L);
        }

        @Nested
        class NestedTests {

            @Test
            void nestedClassSharesTheServer(RedisServer server) {
                assertThat(server.port()).isEqualTo(port);
                assertThat(server.command("PING")).isEqualTo("PONG");
            }
        }
    }

    static class PerTestScenario {

        @RegisterExtension
        static final RedisExtension redis = RedisExtension.perTest();

        static final List<Long> pids = new CopyOnWriteArrayList<>();

        private final RedisServer constructorServer;

        PerTestScenario(RedisServer server) {
            this.constructorServer = server;
        }

        @BeforeEach
        void checkSameServer(RedisServer server) {
            assertThat(server).isSameAs(constructorServer).isSameAs(redis.server());
        }

        @AfterEach
        void record(RedisServer server) {
            pids.add(server.pid());
        }

        @Test
        void first(RedisServer server) {
            assertThat(server.command("DBSIZE")).isEqualTo(0L);
            server.command("SET", "k", "v");
        }

        @Test
        void second(RedisServer server) {
            assertThat(server.command("DBSIZE")).isEqualTo(0L);
            server.command("SET", "k", "v");
        }
    }

    static class InstanceFieldScenario {

        @RegisterExtension
        final RedisExtension redis = RedisExtension.perClass();

        @Test
        void neverRuns() {
            assertThat(redis).isNotNull();
        }
    }

    static class PerTestBeforeAllScenario {

        @RegisterExtension
        static final RedisExtension redis = RedisExtension.perTest();

        @BeforeAll
        static void tooEarly(RedisServer server) {
            assertThat(server).isNotNull();
        }

        @Test
        void neverRuns() {
            assertThat(redis).isNotNull();
        }
    }
}
