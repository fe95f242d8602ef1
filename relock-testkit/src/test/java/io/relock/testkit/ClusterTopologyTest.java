package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.TopologySupport.NotReady;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One cluster for the class; the extension restores and empties it before each test. */
class ClusterTopologyTest {

    private static final Duration FAILOVER = Duration.ofSeconds(30);

    @RegisterExtension
    static final ClusterExtension extension = ClusterExtension.perClass();

    @Test
    void formsAHealthyClusterOfThreeMastersWithAReplicaEach(ClusterTopology cluster) {
        assertThat(cluster).isSameAs(extension.topology());
        assertThat(cluster.nodes()).hasSize(6);
        assertThat(cluster.uris()).hasSize(6).allMatch(uri -> uri.startsWith("redis://127.0.0.1:"));
        assertThat(cluster.masters()).hasSize(3);
        assertThat(cluster.replicas()).hasSize(3).doesNotContainAnyElementsOf(cluster.masters());
        for (RedisServer node : cluster.nodes()) {
            Map<String, String> state = TopologySupport.parseInfo(node.command("CLUSTER", "INFO"));
            assertThat(state)
                    .containsEntry("cluster_state", "ok")
                    .containsEntry("cluster_slots_assigned", "16384")
                    .containsEntry("cluster_slots_ok", "16384")
                    .containsEntry("cluster_known_nodes", "6")
                    .containsEntry("cluster_size", "3");
        }
        for (RedisServer master : cluster.masters()) {
            List<RedisServer> replicas = cluster.replicasOf(master);
            assertThat(replicas).hasSize(1);
            assertThat(TopologySupport.info(replicas.get(0), "replication"))
                    .containsEntry("master_port", Integer.toString(master.port()))
                    .containsEntry("master_link_status", "up");
        }
    }

    @Test
    void slotFollowsTheSpecification() {
        assertThat(ClusterTopology.slot("123456789")).isEqualTo(12739); // CRC16 0x31C3
        assertThat(ClusterTopology.slot("{user1000}.following")).isEqualTo(ClusterTopology.slot("{user1000}.followers"))
                .isEqualTo(ClusterTopology.slot("user1000"));
        assertThat(ClusterTopology.slot("{order:42}:x")).isEqualTo(ClusterTopology.slot("order:42"));
        assertThat(ClusterTopology.slot("foo{}{bar}")).isNotEqualTo(ClusterTopology.slot("bar")); // empty tag: whole key
        assertThat(ClusterTopology.slot("foo{{bar}}zap")).isEqualTo(ClusterTopology.slot("{bar"));
        assertThat(ClusterTopology.slot("foo{bar}{zap}")).isEqualTo(ClusterTopology.slot("bar"));
        assertThat(ClusterTopology.slot("")).isZero();
    }

    @Test
    void slotAgreesWithTheServer(ClusterTopology cluster) {
        RedisServer node = cluster.nodes().get(0);
        List<String> keys = List.of("", "a", "123456789", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap",
                "foo{bar}{zap}", "{", "}{", "{order:42}:x", "grüezi", "{日本}語", "relock:lock:{α}", "x".repeat(1000));
        for (String key : keys) {
            assertThat(ClusterTopology.slot(key)).as(key).isEqualTo(((Long) node.command("CLUSTER", "KEYSLOT", key)).intValue());
        }
    }

    @Test
    void keysWithTheSameHashTagHaveTheSameMaster(ClusterTopology cluster) {
        Set<RedisServer> masters = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            RedisServer master = cluster.masterFor("{order:" + i + "}:x");
            assertThat(cluster.masterFor("order:" + i)).isSameAs(master);
            masters.add(master);
        }
        assertThat(masters).containsExactlyInAnyOrderElementsOf(cluster.masters());
    }

    @Test
    void keyWrittenOnItsMasterIsReadableThereAndMovedEverywhereElse(ClusterTopology cluster) {
        String key = "{order:42}:lock";
        RedisServer master = cluster.masterFor(key);

        assertThat(master.command("SET", key, "owner")).isEqualTo("OK");

        assertThat(master.command("GET", key)).isEqualTo("owner");
        for (RedisServer other : cluster.masters()) {
            if (other != master) {
                assertThatThrownBy(() -> other.command("GET", key))
                        .isInstanceOf(RedisServer.CommandException.class)
                        .hasMessage("MOVED " + ClusterTopology.slot(key) + " 127.0.0.1:" + master.port());
            }
        }
    }

    @Test
    void failoverPromotesTheReplicaAndTheOldMasterFollowsIt(ClusterTopology cluster) {
        String key = "{order:7}:lock";
        RedisServer master = cluster.masterFor(key);
        RedisServer replica = cluster.replicasOf(master).get(0);
        master.command("SET", key, "owner");

        RedisServer promoted = cluster.failover(master);

        assertThat(promoted).isSameAs(replica);
        assertThat(TopologySupport.info(promoted, "replication")).containsEntry("role", "master");
        assertThat(cluster.masterFor(key)).isSameAs(promoted);
        // A coordinated failover loses nothing.
        assertThat(promoted.command("GET", key)).isEqualTo("owner");
        cluster.awaitHealthy();
        assertThat(cluster.replicasOf(promoted)).containsExactly(master);
        assertThat(cluster.masters()).contains(promoted).doesNotContain(master);
    }

    @Test
    void failoverReturnsOnceEveryNodeAgreesOnTheSlotMapTheReplicationAndTheEpochs(ClusterTopology cluster) {
        RedisServer master = cluster.masters().get(1);
        ClusterNodes.Entry before = entry(ClusterNodes.parse(master.command("CLUSTER", "NODES")), master);

        RedisServer promoted = cluster.failover(master);

        // At once, without waiting: what failover() returns on must already hold on every node.
        String agreed = null;
        String currentEpoch = null;
        for (RedisServer node : cluster.nodes()) {
            Map<String, String> state = TopologySupport.parseInfo(node.command("CLUSTER", "INFO"));
            assertThat(state).as("port %d", node.port())
                    .containsEntry("cluster_state", "ok")
                    .containsEntry("cluster_slots_ok", "16384");
            List<ClusterNodes.Entry> view = ClusterNodes.parse(node.command("CLUSTER", "NODES"));
            assertThat(view).as("port %d flags none failing", node.port()).noneMatch(ClusterNodes.Entry::failing);
            ClusterNodes.Entry seenPromoted = entry(view, promoted);
            ClusterNodes.Entry seenOld = entry(view, master);
            assertThat(seenPromoted.isMaster()).as("port %d sees the promoted replica as a master", node.port()).isTrue();
            assertThat(seenPromoted.slotRanges()).as("slots of the promoted replica seen by port %d", node.port())
                    .isEqualTo(before.slotRanges());
            assertThat(seenOld.isMaster()).as("port %d sees the old master as a master", node.port()).isFalse();
            assertThat(seenOld.masterId()).as("master of the old master seen by port %d", node.port())
                    .isEqualTo(seenPromoted.id());
            String description = describe(view);
            if (agreed == null) {
                agreed = description;
                currentEpoch = state.get("cluster_current_epoch");
            } else {
                assertThat(description).as("CLUSTER NODES of port %d", node.port()).isEqualTo(agreed);
                assertThat(state).as("port %d", node.port()).containsEntry("cluster_current_epoch", currentEpoch);
            }
        }
        assertThat(TopologySupport.info(master, "replication"))
                .containsEntry("role", "slave")
                .containsEntry("master_port", Integer.toString(promoted.port()))
                .containsEntry("master_link_status", "up");
    }

    @Test
    void killedMasterIsReplacedByItsReplicaAndRejoinsWithItsIdentity(ClusterTopology cluster) {
        String key = "{order:9}:lock";
        RedisServer master = cluster.masterFor(key);
        RedisServer replica = cluster.replicasOf(master).get(0);
        Object id = master.command("CLUSTER", "MYID");

        master.kill();
        TopologySupport.await("the replica serving the key", FAILOVER, () -> {
            if (cluster.masterFor(key) != replica) {
                throw new NotReady("port " + replica.port() + " does not serve the key yet");
            }
            return Boolean.TRUE;
        }, cluster.nodes());
        cluster.restore();

        assertThat(master.command("CLUSTER", "MYID")).isEqualTo(id);
        assertThat(cluster.masterFor(key)).isSameAs(replica);
        assertThat(cluster.replicasOf(replica)).containsExactly(master);
    }

    @Test
    void forcedFailoverWorksWhileTheMasterIsPaused(ClusterTopology cluster) {
        RedisServer master = cluster.masters().get(0);
        RedisServer replica = cluster.replicasOf(master).get(0);
        master.pause();

        RedisServer promoted = cluster.failover(master, FAILOVER);

        assertThat(promoted).isSameAs(replica);
        master.resume();
        cluster.awaitHealthy();
        assertThat(cluster.replicasOf(promoted)).containsExactly(master);
    }

    @Test
    void failoverOfAReplicaIsRejected(ClusterTopology cluster) {
        RedisServer replica = cluster.replicas().get(0);

        assertThatThrownBy(() -> cluster.failover(replica))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("master must be a master with slots");
    }

    @Test
    void builderRejectsInvalidAndRepeatedSettings() {
        assertThatThrownBy(() -> ClusterTopology.builder().masters(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masters");
        assertThatThrownBy(() -> ClusterTopology.builder().replicasPerMaster(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicasPerMaster");
        assertThatThrownBy(() -> ClusterTopology.builder().masters(3).masters(3))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("masters was already set");
        assertThatThrownBy(() -> ClusterTopology.builder().nodeTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeTimeout");
    }

    private static ClusterNodes.Entry entry(List<ClusterNodes.Entry> view, RedisServer node) {
        return view.stream().filter(entry -> entry.port() == node.port()).findFirst()
                .orElseThrow(() -> new AssertionError("port " + node.port() + " is not in " + view));
    }

    /** Who serves which slots, who replicates whom and every node's config epoch, by port: equal for views that agree. */
    private static String describe(List<ClusterNodes.Entry> view) {
        Map<String, Integer> ports = new HashMap<>();
        view.forEach(entry -> ports.put(entry.id(), entry.port()));
        return view.stream()
                .map(entry -> entry.port() + (entry.isMaster() ? " master of [" + entry.slotRanges() + "]"
                        : " replica of " + ports.get(entry.masterId())) + " epoch " + entry.configEpoch())
                .sorted()
                .collect(Collectors.joining(", "));
    }
}
