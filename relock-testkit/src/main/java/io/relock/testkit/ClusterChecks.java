package io.relock.testkit;

import static io.relock.testkit.TopologySupport.expect;
import static io.relock.testkit.TopologySupport.info;
import static io.relock.testkit.TopologySupport.parseInfo;
import static io.relock.testkit.TopologySupport.probe;
import static io.relock.testkit.TopologySupport.reachable;
import static io.relock.testkit.TopologySupport.requireReachable;

import io.relock.testkit.ClusterNodes.Entry;
import io.relock.testkit.TopologySupport.NotReady;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How a {@link ClusterTopology} reads its cluster: {@code CLUSTER NODES} of a node that answers,
 * the node behind a port, and the probes its waits repeat — the view its nodes agree on, and a
 * replica's promotion — each throwing {@link NotReady} with what is missing.
 */
final class ClusterChecks {

    private final ClusterTopology topology; // for messages
    private final List<RedisServer> nodes;
    private final int masterCount;
    private final int replicasPerMaster;

    ClusterChecks(ClusterTopology topology, List<RedisServer> nodes, int masterCount, int replicasPerMaster) {
        this.topology = topology;
        this.nodes = nodes;
        this.masterCount = masterCount;
        this.replicasPerMaster = replicasPerMaster;
    }

    /**
     * Returns {@code replica} once it has taken {@code master}'s place, as
     * {@link ClusterTopology#failover(RedisServer, Duration)} describes; {@link NotReady} until then.
     */
    RedisServer promoted(RedisServer replica, RedisServer master, Entry masterEntry) {
        String role = info(replica, "replication").get("role");
        if (!"master".equals(role)) {
            throw new NotReady("port " + replica.port() + " reports role " + role);
        }
        List<Entry> agreed = checkAgreement(false);
        Entry seen = known(agreed, replica);
        if (!seen.isMaster() || !seen.slotRanges().equals(masterEntry.slotRanges())) {
            throw new NotReady("the nodes see port " + replica.port() + " as " + seen.flags() + " with slots ["
                    + seen.slotRanges() + "] instead of master of [" + masterEntry.slotRanges() + "]");
        }
        if (reachable(master)) {
            Entry old = known(agreed, master);
            if (!seen.id().equals(old.masterId())) {
                throw new NotReady("the nodes see port " + master.port() + " as " + old.flags()
                        + " with master " + old.masterId() + ", not as a replica of port " + replica.port());
            }
        }
        return replica;
    }

    /**
     * Returns the view of the cluster on which its nodes agree, or throws {@link NotReady}; see
     * {@link ClusterTopology#awaitHealthy(Duration)} ({@code everyNode}) and
     * {@link ClusterTopology#failover(RedisServer, Duration)} (only the nodes that answer, and no
     * sizes expected).
     */
    List<Entry> checkAgreement(boolean everyNode) {
        Set<Integer> live = new HashSet<>();
        for (RedisServer node : nodes) {
            if (everyNode) {
                requireReachable(node, "cluster node");
            }
            if (reachable(node)) {
                live.add(node.port());
            }
        }
        if (live.isEmpty()) {
            throw new NotReady("no cluster node is running and not paused");
        }
        RedisServer first = null;
        String agreed = null;
        String agreedEpoch = null;
        List<Entry> view = null;
        for (RedisServer node : nodes) {
            if (!live.contains(node.port())) {
                continue;
            }
            Map<String, String> state = requireStateOk(node);
            String where = "node on port " + node.port();
            expect(where + " knows nodes", nodes.size(), state.get("cluster_known_nodes"));
            List<Entry> entries = ClusterNodes.parse(probe(node, "CLUSTER", "NODES"));
            for (Entry entry : entries) {
                if (!live.contains(entry.port())) {
                    continue; // a node that is down or paused is flagged failing, in time
                }
                if (entry.failing()) {
                    throw new NotReady(where + " flags port " + entry.port() + " as " + entry.flags());
                }
                if (!entry.flags().contains("myself") && !"connected".equals(entry.linkState())) {
                    throw new NotReady(where + " is " + entry.linkState() + " from port " + entry.port());
                }
            }
            String signature = ClusterNodes.signature(entries, live);
            String epoch = state.get("cluster_current_epoch");
            if (first == null) {
                first = node;
                agreed = signature;
                agreedEpoch = epoch;
                view = entries;
            } else if (!agreed.equals(signature)) {
                throw new NotReady("nodes disagree: port " + first.port() + " sees " + agreed + ", port " + node.port()
                        + " sees " + signature);
            } else if (!agreedEpoch.equals(epoch)) {
                throw new NotReady("nodes disagree about the current epoch: port " + first.port() + " reports " + agreedEpoch
                        + ", port " + node.port() + " reports " + epoch);
            }
        }
        Map<Long, Integer> masterEpochs = new HashMap<>();
        for (Entry entry : view) {
            if (entry.isMaster() && live.contains(entry.port())) {
                Integer other = masterEpochs.put(entry.configEpoch(), entry.port());
                if (other != null) {
                    // Redis Cluster resolves it by bumping one of them: the view is about to change.
                    throw new NotReady("masters on ports " + other + " and " + entry.port() + " share config epoch "
                            + entry.configEpoch());
                }
            }
        }
        List<Entry> masters = view.stream().filter(entry -> entry.isMaster() && entry.slots() > 0).collect(Collectors.toList());
        if (everyNode) {
            expect("masters with slots", masterCount, Integer.toString(masters.size()));
        }
        for (Entry master : masters) {
            List<Entry> replicas = view.stream().filter(entry -> master.id().equals(entry.masterId()))
                    .collect(Collectors.toList());
            if (everyNode && replicas.size() < replicasPerMaster) {
                throw new NotReady("master on port " + master.port() + " has " + replicas.size() + " replicas instead of "
                        + replicasPerMaster);
            }
            for (Entry replica : replicas) {
                if (!live.contains(replica.port())) {
                    continue;
                }
                Map<String, String> replication = info(node(replica.port()), "replication");
                if (!Integer.toString(master.port()).equals(replication.get("master_port"))
                        || !"up".equals(replication.get("master_link_status"))
                        || !"0".equals(replication.get("master_sync_in_progress"))) {
                    throw new NotReady("replica on port " + replica.port() + " reports master port "
                            + replication.get("master_port") + ", link " + replication.get("master_link_status")
                            + ", sync in progress " + replication.get("master_sync_in_progress") + " (master: port "
                            + master.port() + ")");
                }
            }
        }
        return view;
    }

    /** Returns {@code CLUSTER INFO} of {@code node}; {@link NotReady} unless the cluster is ok there with all slots served. */
    private static Map<String, String> requireStateOk(RedisServer node) {
        Map<String, String> state = parseInfo(probe(node, "CLUSTER", "INFO"));
        String where = "node on port " + node.port();
        if (!"ok".equals(state.get("cluster_state"))) {
            throw new NotReady(where + " reports cluster_state " + state.get("cluster_state"));
        }
        expect(where + " reports slots ok", ClusterTopology.SLOTS, state.get("cluster_slots_ok"));
        return state;
    }

    /** Returns {@code CLUSTER NODES} of the first node that answers. */
    List<Entry> view() {
        return ClusterNodes.parse(firstReachable().command("CLUSTER", "NODES"));
    }

    RedisServer firstReachable() {
        for (RedisServer node : nodes) {
            if (reachable(node)) {
                return node;
            }
        }
        throw new IllegalStateException("no node of the " + topology + " is running and not paused");
    }

    RedisServer node(int port) {
        for (RedisServer node : nodes) {
            if (node.port() == port) {
                return node;
            }
        }
        throw new IllegalStateException("port " + port + " is not a node of the " + topology);
    }

    Entry known(List<Entry> view, RedisServer node) {
        Entry entry = ClusterNodes.entry(view, node.port());
        if (entry == null) {
            throw new IllegalStateException("the cluster does not know the node on port " + node.port() + " (yet)");
        }
        return entry;
    }

}
