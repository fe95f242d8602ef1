package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One topology for the class; the extension restores and empties it before each test. */
class SentinelTopologyTest {

    private static final Duration FAILOVER = Duration.ofSeconds(30);

    @RegisterExtension
    static final SentinelExtension sentinel = SentinelExtension.perClass();

    @Test
    void startsWithAMasterTwoOnlineReplicasAndThreeSentinelsThatKnowEachOther(SentinelTopology topology) {
        RedisServer master = topology.master();

        assertThat(topology).isSameAs(sentinel.topology());
        assertThat(topology.masterName()).isEqualTo("mymaster");
        assertThat(topology.quorum()).isEqualTo(2);
        assertThat(topology.dataNodes()).hasSize(3).contains(master);
        assertThat(topology.replicas()).hasSize(2).doesNotContain(master);
        assertThat(topology.sentinels()).hasSize(3);
        Map<String, String> replication = TopologySupport.info(master, "replication");
        assertThat(replication).containsEntry("role", "master").containsEntry("connected_slaves", "2");
        assertThat(replication.get("slave0")).contains("state=online");
        assertThat(replication.get("slave1")).contains("state=online");
        for (RedisServer node : topology.sentinels()) {
            assertThat(TopologySupport.info(node, "server")).containsEntry("redis_mode", "sentinel");
            assertThat(TopologySupport.pairs(node.command("SENTINEL", "MASTER", "mymaster")))
                    .containsEntry("port", Integer.toString(master.port()))
                    .containsEntry("flags", "master")
                    .containsEntry("num-other-sentinels", "2")
                    .containsEntry("num-slaves", "2")
                    .containsEntry("quorum", "2")
                    .containsEntry("down-after-milliseconds", "1000")
                    .containsEntry("failover-timeout", "5000")
                    .containsEntry("parallel-syncs", "1");
        }
    }

    @Test
    void urisNameEverySentinel(SentinelTopology topology) {
        List<RedisServer> sentinels = topology.sentinels();

        assertThat(topology.sentinelUris()).containsExactly(sentinels.get(0).uri(), sentinels.get(1).uri(),
                sentinels.get(2).uri());
        assertThat(topology.sentinelUri()).isEqualTo("redis-sentinel://127.0.0.1:" + sentinels.get(0).port()
                + ",127.0.0.1:" + sentinels.get(1).port() + ",127.0.0.1:" + sentinels.get(2).port() + "#mymaster");
    }

    @Test
    void writeToTheMasterReachesEveryReplica(SentinelTopology topology) throws IOException {
        RedisServer master = topology.master();

        List<Object> replies = Resp.pipeline(master.host(), master.port(), Duration.ofSeconds(5),
                List.of(List.of("SET", "greeting", "hello"), List.of("WAIT", "2", "1000")));

        assertThat(replies).containsExactly("OK", 2L);
        for (RedisServer replica : topology.replicas()) {
            assertThat(replica.command("GET", "greeting")).isEqualTo("hello");
            assertThatThrownBy(() -> replica.command("SET", "greeting", "bye"))
                    .isInstanceOf(RedisServer.CommandException.class)
                    .hasMessageStartingWith("READONLY");
        }
    }

    @Test
    void failoverMovesTheMasterAndTheOldMasterBecomesAReplicaOfTheNewOne(SentinelTopology topology) {
        RedisServer old = topology.master();

        RedisServer promoted = topology.failover();

        assertThat(promoted).isNotSameAs(old).isIn(topology.dataNodes());
        assertThat(TopologySupport.info(promoted, "replication")).containsEntry("role", "master");
        for (RedisServer node : topology.sentinels()) {
            assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
                    .isEqualTo(List.of("127.0.0.1", Integer.toString(promoted.port())));
        }
        // Sentinel demotes a running old master only when it next inspects it, some seconds later.
        topology.awaitHealthy();
        assertThat(TopologySupport.info(old, "replication"))
                .containsEntry("role", "slave")
                .containsEntry("master_port", Integer.toString(promoted.port()))
                .containsEntry("master_link_status", "up");
        assertThat(topology.master()).isSameAs(promoted);
        assertThat(topology.replicas()).contains(old).doesNotContain(promoted);
    }

    @Test
    void killedMasterIsReplacedByTheSentinelsAndRestoreBringsItBackAsAReplica(SentinelTopology topology) {
        RedisServer old = topology.master();

        old.kill();
        RedisServer promoted = topology.awaitMasterChange(old, FAILOVER);

        assertThat(promoted).isNotSameAs(old);
        assertThat(TopologySupport.info(promoted, "replication")).containsEntry("role", "master");

        topology.restore();
        // The sentinels may still be finishing the failover when restore() returns.
        topology.awaitHealthy();

        assertThat(old.isRunning()).isTrue();
        assertThat(topology.master()).isSameAs(promoted);
        assertThat(TopologySupport.info(old, "replication"))
                .containsEntry("role", "slave")
                .containsEntry("master_port", Integer.toString(promoted.port()));
    }

    @Test
    void restoreResumesAndRestartsServersAndPointsRestartedReplicasAtTheMaster(SentinelTopology topology) {
        RedisServer master = topology.master();
        List<RedisServer> replicas = topology.replicas();
        RedisServer killedSentinel = topology.sentinels().get(0);
        killedSentinel.kill();
        topology.sentinels().get(1).pause();
        replicas.get(0).kill();
        replicas.get(1).pause();

        topology.restore();

        assertThat(topology.master()).isSameAs(master);
        for (RedisServer server : topology.dataNodes()) {
            assertThat(server.isRunning()).isTrue();
            assertThat(server.isPaused()).isFalse();
        }
        // The restarted sentinel kept its identity and knowledge in its config file.
        assertThat(TopologySupport.pairs(killedSentinel.command("SENTINEL", "MASTER", "mymaster")))
                .containsEntry("num-other-sentinels", "2")
                .containsEntry("num-slaves", "2");
        assertThat(TopologySupport.info(replicas.get(0), "replication"))
                .containsEntry("master_port", Integer.toString(master.port()))
                .containsEntry("master_link_status", "up");
    }

    @Test
    void awaitMasterChangeGivesUpWithTheReasonAndTheLogs(SentinelTopology topology) {
        RedisServer master = topology.master();

        assertThatThrownBy(() -> topology.awaitMasterChange(master, Duration.ofMillis(200)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a new master instead of port " + master.port() + " not reached within PT0.2S")
                .hasMessageContaining("the sentinels still report port " + master.port())
                .hasMessageContaining("--- port " + master.port());
        assertThatThrownBy(() -> topology.awaitMasterChange(topology.sentinels().get(0), FAILOVER))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("previous must be a data node");
    }

    @Test
    void builderRejectsInvalidAndRepeatedSettings() {
        assertThatThrownBy(() -> SentinelTopology.builder().replicas(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas");
        assertThatThrownBy(() -> SentinelTopology.builder().sentinels(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sentinels");
        assertThatThrownBy(() -> SentinelTopology.builder().replicas(1).replicas(1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("replicas was already set");
        assertThatThrownBy(() -> SentinelTopology.builder().masterName("my master"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masterName");
        assertThatThrownBy(() -> SentinelTopology.builder().downAfter(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("downAfter");
        assertThatThrownBy(() -> SentinelTopology.builder().sentinels(1).quorum(2).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("quorum");
    }
}
