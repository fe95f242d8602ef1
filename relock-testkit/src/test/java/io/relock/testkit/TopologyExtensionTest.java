package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs small test classes (the static nested "scenarios", which surefire does not run on its
 * own) through the JUnit launcher, to check the topology extensions' whole lifecycle on the
 * smallest topologies: a master with one Sentinel, and a one-node cluster.
 */
class TopologyExtensionTest {

    @Test
    void sentinelExtensionSharesOneTopologyRestoresAndEmptiesItBeforeEachTestAndStopsItAfterTheClass() {
        SentinelScenario.topologies.clear();

        TestExecutionSummary summary = run(SentinelScenario.class);

        assertThat(summary.getTotalFailureCount()).as(failures(summary)).isZero();
        assertThat(summary.getTestsSucceededCount()).isEqualTo(3);
        assertThat(SentinelScenario.topologies).hasSize(3).containsOnly(SentinelScenario.topologies.get(0));
        SentinelTopology topology = SentinelScenario.topologies.get(0);
        assertThat(topology.dataNodes()).noneMatch(RedisServer::isRunning);
        assertThat(topology.sentinels()).noneMatch(RedisServer::isRunning);
    }

    @Test
    void clusterExtensionSharesOneClusterRestoresAndEmptiesItBeforeEachTestAndStopsItAfterTheClass() {
        ClusterScenario.clusters.clear();

        TestExecutionSummary summary = run(ClusterScenario.class);

        assertThat(summary.getTotalFailureCount()).as(failures(summary)).isZero();
        assertThat(summary.getTestsSucceededCount()).isEqualTo(3);
        assertThat(ClusterScenario.clusters).hasSize(3).containsOnly(ClusterScenario.clusters.get(0));
        assertThat(ClusterScenario.clusters.get(0).nodes()).noneMatch(RedisServer::isRunning);
    }

    @Test
    void extensionOnAnInstanceFieldIsReportedAsAConfigurationError() {
        TestExecutionSummary summary = run(InstanceFieldScenario.class);

        assertThat(summary.getTestsFailedCount()).isEqualTo(1);
        assertThat(summary.getFailures().get(0).getException())
                .isInstanceOf(ExtensionConfigurationException.class)
                .hasMessageContaining("static field");
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
    static class SentinelScenario {

        @RegisterExtension
        static final SentinelExtension sentinel = SentinelExtension.perClass(SentinelTopology.builder().replicas(0).sentinels(1));

        static final List<SentinelTopology> topologies = new CopyOnWriteArrayList<>();

        @BeforeAll
        static void injectedIntoBeforeAll(SentinelTopology topology) {
            assertThat(topology).isSameAs(sentinel.topology());
        }

        @Test
        @Order(1)
        void firstTestWritesAndKillsEverything(SentinelTopology topology) {
            topologies.add(topology);
            RedisServer master = topology.master();
            master.command("SET", "left", "over");
            topology.sentinels().get(0).kill();
            master.kill();
        }

        @Test
        @Order(2)
        void secondTestFindsEverythingRunningAndEmpty(SentinelTopology topology) {
            topologies.add(topology);
            assertThat(topology.sentinels().get(0).isRunning()).isTrue();
            assertThat(topology.master().command("DBSIZE")).isEqualTo(0L);
            topology.master().command("SET", "left", "over");
        }

        @Nested
        class NestedTests {

            @Test
            void nestedClassSharesTheTopologyEmptied(SentinelTopology topology) {
                topologies.add(topology);
                assertThat(topology.master().command("DBSIZE")).isEqualTo(0L);
            }
        }
    }

    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ClusterScenario {

        @RegisterExtension
        static final ClusterExtension extension = ClusterExtension.perClass(ClusterTopology.builder().masters(1)
                .replicasPerMaster(0));

        static final List<ClusterTopology> clusters = new CopyOnWriteArrayList<>();

        private final ClusterTopology constructorCluster;

        ClusterScenario(ClusterTopology cluster) {
            this.constructorCluster = cluster;
        }

        @Test
        @Order(1)
        void firstTestWritesAndPauses(ClusterTopology cluster) {
            clusters.add(cluster);
            assertThat(cluster).isSameAs(constructorCluster).isSameAs(extension.topology());
            cluster.masterFor("k").command("SET", "k", "v");
            cluster.nodes().get(0).pause();
        }

        @Test
        @Order(2)
        void secondTestFindsTheNodeResumedAndEmpty(ClusterTopology cluster) {
            clusters.add(cluster);
            assertThat(cluster.nodes().get(0).isPaused()).isFalse();
            assertThat(cluster.masterFor("k").command("DBSIZE")).isEqualTo(0L);
            cluster.masterFor("k").command("SET", "k", "v");
            cluster.nodes().get(0).kill();
        }

        @Test
        @Order(3)
        void killedNodeIsBackWithItsSlots(ClusterTopology cluster) {
            clusters.add(cluster);
            assertThat(cluster.masters()).containsExactly(cluster.nodes().get(0));
            assertThat(cluster.masterFor("k").command("DBSIZE")).isEqualTo(0L);
        }
    }

    static class InstanceFieldScenario {

        @RegisterExtension
        final ClusterExtension cluster = ClusterExtension.perClass();

        @Test
        void neverRuns() {
            assertThat(cluster).isNotNull();
        }
    }
}
