package io.relock.testkit;

import static io.relock.testkit.TopologySupport.expect;
import static io.relock.testkit.TopologySupport.info;
import static io.relock.testkit.TopologySupport.pairs;
import static io.relock.testkit.TopologySupport.probe;
import static io.relock.testkit.TopologySupport.reachable;
import static io.relock.testkit.TopologySupport.requireReachable;

import io.relock.testkit.TopologySupport.NotReady;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The probes a {@link SentinelTopology} waits with: what the Sentinels report as the master,
 * whether a failover is over, whether the topology is settled — each throwing {@link NotReady}
 * with what is missing — and the role repair that {@link SentinelTopology#restore()} does
 * between two probes.
 */
final class SentinelChecks {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelTopology.class);

    private final SentinelTopology topology; // for messages
    private final String masterName;
    private final List<RedisServer> dataNodes;
    private final List<RedisServer> sentinels;

    SentinelChecks(SentinelTopology topology) {
        this.topology = topology;
        this.masterName = topology.masterName();
        this.dataNodes = topology.dataNodes();
        this.sentinels = topology.sentinels();
    }

    /** Returns the master that {@code sentinel} reports; {@link NotReady} if it reports none or a stranger. */
    RedisServer reportedMaster(RedisServer sentinel) {
        Object reply = probe(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
        if (!(reply instanceof List<?> address) || address.size() < 2) {
            throw new NotReady("sentinel on port " + sentinel.port() + " reports no master for '" + masterName + "': " + reply);
        }
        int port = Integer.parseInt(String.valueOf(address.get(1)));
        for (RedisServer node : dataNodes) {
            if (node.port() == port) {
                return node;
            }
        }
        throw new IllegalStateException("sentinel on port " + sentinel.port() + " reports a master at " + address.get(0) + ":"
                + port + ", which is not a data node of " + topology);
    }

    /**
     * Returns the master on which the Sentinels agree while none of them is busy with it: every
     * Sentinel — or, unless {@code everySentinel}, every one that is running and not paused —
     * reports the same data node ({@code SENTINEL GET-MASTER-ADDR-BY-NAME} and the address in
     * {@code SENTINEL MASTER}) with the same {@code config-epoch}, flags it just {@code master}
     * (not down, no failover in progress: no {@code failover-state}), and has no PING to it
     * unanswered ({@code last-ping-sent} 0); and, if {@code previous} is not null, one other
     * than {@code previous}. {@link NotReady} otherwise, and first for a master that is not
     * agreed on or is {@code previous}.
     */
    private RedisServer settledMaster(boolean everySentinel, RedisServer previous) {
        Map<RedisServer, Map<String, String>> states = new LinkedHashMap<>();
        Map<Integer, List<Integer>> masters = new TreeMap<>(); // master port: sentinel ports
        RedisServer master = null;
        for (RedisServer sentinel : sentinels) {
            if (!reachable(sentinel)) {
                if (everySentinel) {
                    requireReachable(sentinel, "sentinel");
                }
                continue;
            }
            master = reportedMaster(sentinel);
            states.put(sentinel, pairs(probe(sentinel, "SENTINEL", "MASTER", masterName)));
            masters.computeIfAbsent(master.port(), port -> new ArrayList<>()).add(sentinel.port());
        }
        if (master == null) {
            throw new NotReady("no sentinel is running and not paused");
        }
        if (masters.size() > 1) {
            throw new NotReady("the sentinels disagree about the master (master port: sentinel ports): " + masters);
        }
        if (master == previous) {
            throw new NotReady("the sentinels still report port " + previous.port());
        }
        Map<String, List<Integer>> epochs = new TreeMap<>(); // config epoch: sentinel ports
        for (Map.Entry<RedisServer, Map<String, String>> entry : states.entrySet()) {
            String where = "sentinel on port " + entry.getKey().port();
            Map<String, String> state = entry.getValue();
            if (!"master".equals(state.get("flags")) || state.containsKey("failover-state")) {
                // Down or failing over: the master may still change.
                throw new NotReady(where + " flags the master as " + state.get("flags")
                        + (state.containsKey("failover-state") ? ", failover state " + state.get("failover-state") : ""));
            }
            if (!Integer.toString(master.port()).equals(state.get("port"))) {
                throw new NotReady(where + " reports master port " + master.port() + " but monitors port " + state.get("port"));
            }
            if (!"0".equals(state.get("last-ping-sent"))) {
                // A Sentinel that switches to a new master counts a PING as unanswered from the
                // switch on, until it has reconnected; with a short down-after it may declare the
                // new master down meanwhile, and start another failover at once.
                throw new NotReady(where + " has a PING to the master on port " + master.port() + " unanswered for "
                        + state.get("last-ping-sent") + " ms");
            }
            epochs.computeIfAbsent(state.get("config-epoch"), epoch -> new ArrayList<>()).add(entry.getKey().port());
        }
        if (epochs.size() > 1) {
            throw new NotReady("the sentinels disagree about the config epoch (epoch: sentinel ports): " + epochs);
        }
        return master;
    }

    /**
     * Returns the new master once a failover away from {@code previous} is over: see
     * {@link SentinelTopology#awaitMasterChange}. {@link NotReady} until then.
     */
    RedisServer failedOverFrom(RedisServer previous) {
        RedisServer master = settledMaster(false, previous);
        String role = info(master, "replication").get("role");
        if (!"master".equals(role)) {
            throw new NotReady("the sentinels report port " + master.port() + ", which reports role " + role);
        }
        for (RedisServer node : dataNodes) {
            if (node != master && node != previous && reachable(node)) {
                requireReplicaOf(node, master);
            }
        }
        return master;
    }

    /**
     * Throws {@link NotReady} unless the topology is settled: see {@link SentinelTopology#awaitHealthy(Duration)}.
     */
    void checkSettled() {
        for (RedisServer node : dataNodes) {
            requireReachable(node, "data node");
        }
        for (RedisServer sentinel : sentinels) {
            requireReachable(sentinel, "sentinel");
        }
        RedisServer master = settledMaster(true, null);
        Set<Integer> replicaPorts = new TreeSet<>();
        for (RedisServer node : dataNodes) {
            if (node != master) {
                replicaPorts.add(node.port());
            }
        }
        for (RedisServer sentinel : sentinels) {
            String where = "sentinel on port " + sentinel.port();
            Map<String, String> state = pairs(probe(sentinel, "SENTINEL", "MASTER", masterName));
            if (!"master".equals(state.get("role-reported"))) {
                throw new NotReady(where + " last saw the master on port " + master.port() + " report role "
                        + state.get("role-reported"));
            }
            expect(where + " knows other sentinels", sentinels.size() - 1, state.get("num-other-sentinels"));
            for (Object other : (List<?>) probe(sentinel, "SENTINEL", "SENTINELS", masterName)) {
                Map<String, String> fields = pairs(other);
                if (hasAny(fields.get("flags"), "s_down", "o_down", "disconnected")) {
                    throw new NotReady(where + " flags sentinel " + fields.get("name") + " as " + fields.get("flags"));
                }
            }
            expect(where + " knows replicas", replicaPorts.size(), state.get("num-slaves"));
            Set<Integer> known = new TreeSet<>();
            for (Object replica : (List<?>) probe(sentinel, "SENTINEL", "REPLICAS", masterName)) {
                Map<String, String> fields = pairs(replica);
                String name = "replica " + fields.get("name");
                if (!"slave".equals(fields.get("flags"))) {
                    // s_down, o_down, disconnected, or promoted / reconf_* left from a failover
                    throw new NotReady(where + " flags " + name + " as " + fields.get("flags"));
                }
                // What the Sentinel last saw (INFO, every 10 s): a replica it takes for a master,
                // or for a replica of another node, is one it reconfigures, even in a failover.
                if (!"slave".equals(fields.get("role-reported"))
                        || !master.host().equals(fields.get("master-host"))
                        || !Integer.toString(master.port()).equals(fields.get("master-port"))
                        || !"ok".equals(fields.get("master-link-status"))) {
                    throw new NotReady(where + " last saw " + name + " report role " + fields.get("role-reported")
                            + ", master " + fields.get("master-host") + ":" + fields.get("master-port") + ", link "
                            + fields.get("master-link-status") + " (master: port " + master.port() + ")");
                }
                known.add(Integer.parseInt(fields.get("port")));
            }
            if (!known.equals(replicaPorts)) {
                throw new NotReady(where + " knows replicas on ports " + known + " instead of " + replicaPorts);
            }
        }
        Map<String, String> replication = info(master, "replication");
        if (!"master".equals(replication.get("role"))) {
            throw new NotReady("master on port " + master.port() + " reports role " + replication.get("role"));
        }
        requireReplicasOnline(master, replication, replicaPorts.size());
        for (RedisServer node : dataNodes) {
            if (node != master) {
                requireReplicaOf(node, master);
            }
        }
    }

    /** Throws {@link NotReady} unless {@code master}'s INFO {@code replication} shows {@code count} replicas, all online. */
    static void requireReplicasOnline(RedisServer master, Map<String, String> replication, int count) {
        expect("master on port " + master.port() + " has connected replicas", count, replication.get("connected_slaves"));
        for (int i = 0; i < count; i++) {
            String replica = replication.get("slave" + i);
            if (replica == null || !replica.contains("state=online")) {
                throw new NotReady("master on port " + master.port() + " reports replica " + i + " as " + replica);
            }
        }
    }

    /** Throws {@link NotReady} unless {@code node} replicates {@code master}, with its link up and no sync under way. */
    private static void requireReplicaOf(RedisServer node, RedisServer master) {
        Map<String, String> own = info(node, "replication");
        if (!"slave".equals(own.get("role")) || !master.host().equals(own.get("master_host"))
                || !Integer.toString(master.port()).equals(own.get("master_port"))
                || !"up".equals(own.get("master_link_status")) || !"0".equals(own.get("master_sync_in_progress"))) {
            throw new NotReady("replica on port " + node.port() + " reports role " + own.get("role") + ", master port "
                    + own.get("master_port") + ", link " + own.get("master_link_status") + ", sync in progress "
                    + own.get("master_sync_in_progress") + " (master: port " + master.port() + ")");
        }
    }

    /**
     * Points data nodes that disagree with the Sentinels at their master, once every Sentinel
     * agrees on it and none is busy with it: promotes the master if it reports the replica role,
     * demotes any other node that reports the master role as Sentinel would (closing its
     * clients' connections), and re-points replicas of another node.
     */
    void repairRoles() {
        RedisServer master = settledMaster(true, null);
        for (RedisServer node : dataNodes) {
            Map<String, String> replication = info(node, "replication");
            String role = replication.get("role");
            if (node == master) {
                if (!"master".equals(role)) {
                    LOG.debug("restore: port {} is the master but reports role {}", node.port(), role);
                    probe(node, "REPLICAOF", "NO", "ONE");
                }
            } else if ("master".equals(role)) {
                LOG.debug("restore: demoting port {} to a replica of master port {}", node.port(), master.port());
                TopologySupport.replicaOfClosingClients(node, master);
            } else if (!master.host().equals(replication.get("master_host"))
                    || !Integer.toString(master.port()).equals(replication.get("master_port"))) {
                LOG.debug("restore: pointing port {} at master port {}", node.port(), master.port());
                probe(node, "REPLICAOF", master.host(), Integer.toString(master.port()));
            }
        }
    }

    private static boolean hasAny(String flags, String... wanted) {
        if (flags == null) {
            return true;
        }
        Set<String> present = Set.of(flags.split(","));
        for (String flag : wanted) {
            if (present.contains(flag)) {
                return true;
            }
        }
        return false;
    }
}
