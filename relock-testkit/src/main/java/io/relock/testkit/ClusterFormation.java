package io.relock.testkit;

import static io.relock.testkit.TopologySupport.expect;
import static io.relock.testkit.TopologySupport.probe;

import io.relock.testkit.ClusterNodes.Entry;
import io.relock.testkit.TopologySupport.NotReady;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link ClusterTopology} starts its nodes and forms them into a cluster, without
 * {@code redis-cli}: see its class comment for the steps and the choice of ports.
 */
final class ClusterFormation {

    /** {@link ClusterTopology}'s logger: this is part of its start, and users configure logging by that name. */
    private static final Logger LOG = LoggerFactory.getLogger(ClusterTopology.class);
    private static final int SLOTS = ClusterTopology.SLOTS;
    private static final int BUS_PORT_OFFSET = 10000;
    private static final int FIRST_PORT = 20000;
    /** Ports and bus ports stay below 32768, where Linux starts handing out ports for outgoing connections. */
    private static final int PORT_RANGE = 32768 - BUS_PORT_OFFSET - FIRST_PORT;
    private static final int PORT_CANDIDATES = 200;
    private static final int START_ATTEMPTS = 5;

    private ClusterFormation() {
    }

    /** Slots, epochs and meetings, then replication; see {@link ClusterTopology}'s class comment. */
    static void form(List<RedisServer> nodes, int masterCount, Duration wait) {
        for (int i = 0; i < masterCount; i++) {
            int from = i * SLOTS / masterCount;
            int to = (i + 1) * SLOTS / masterCount - 1;
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = from; slot <= to; slot++) {
                command.add(Integer.toString(slot));
            }
            nodes.get(i).command(command.toArray(new String[0]));
        }
        // Distinct epochs up front spare the nodes resolving collisions among themselves.
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
        }
        RedisServer first = nodes.get(0);
        for (RedisServer node : nodes.subList(1, nodes.size())) {
            first.command("CLUSTER", "MEET", node.host(), Integer.toString(node.port()));
        }
        TopologySupport.await("all nodes meeting", wait, () -> {
            for (RedisServer node : nodes) {
                List<Entry> entries = ClusterNodes.parse(probe(node, "CLUSTER", "NODES"));
                expect("node on port " + node.port() + " knows nodes", nodes.size(), Integer.toString(entries.size()));
                for (Entry entry : entries) {
                    if (entry.flags().contains("handshake")) {
                        throw new NotReady("node on port " + node.port() + " is in a handshake with port " + entry.port());
                    }
                }
            }
            return Boolean.TRUE;
        }, nodes);
        for (int i = masterCount; i < nodes.size(); i++) {
            String masterId = (String) nodes.get(i % masterCount).command("CLUSTER", "MYID");
            nodes.get(i).command("CLUSTER", "REPLICATE", masterId);
        }
    }

    /**
     * Starts one cluster-enabled node on a {@linkplain #freeClusterPort free port pair} with
     * {@code configFile} as its {@code nodes.conf}, retrying on other ports if one is taken
     * before the node binds it.
     *
     * @param configFile the node's {@code cluster-config-file}
     * @param started the nodes started so far, whose ports are not candidates
     * @param binary the redis-server binary, or null for the one {@link RedisBinary#locate()} finds
     * @param nodeTimeoutMillis the node's {@code cluster-node-timeout}
     */
    static RedisServer startNode(Path configFile, List<RedisServer> started, Path binary, long nodeTimeoutMillis) {
        for (int attempt = 1; ; attempt++) {
            RedisServer.Builder builder = RedisServer.builder()
                    .port(freeClusterPort(started))
                    .arg("cluster-enabled", "yes")
                    .arg("cluster-config-file", configFile.toString())
                    .arg("cluster-node-timeout", Long.toString(nodeTimeoutMillis))
                    .arg("cluster-announce-ip", RedisServer.HOST)
                    .arg("cluster-replica-validity-factor", "0")
                    .arg("repl-diskless-sync", "yes")
                    .arg("repl-diskless-sync-delay", "0");
            if (binary != null) {
                builder.binary(binary);
            }
            try {
                return builder.start();
            } catch (RedisServer.StartupException e) {
                if (!e.portInUse() || attempt >= START_ATTEMPTS) {
                    throw e;
                }
                LOG.debug("a port of a cluster node was taken before it could bind it; trying others");
                try {
                    // A node that got as far as writing its config would come back with its identity.
                    Files.deleteIfExists(configFile);
                } catch (IOException deleteFailed) {
                    e.addSuppressed(deleteFailed);
                    throw e;
                }
            }
        }
    }

    /** Returns a port in 20000–22767 that is free, as is the port 10000 above it (the cluster bus). */
    private static int freeClusterPort(List<RedisServer> started) {
        Set<Integer> taken = new HashSet<>();
        for (RedisServer node : started) {
            taken.add(node.port());
            taken.add(node.port() + BUS_PORT_OFFSET);
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < PORT_CANDIDATES; i++) {
            int port = FIRST_PORT + random.nextInt(PORT_RANGE);
            if (!taken.contains(port) && !taken.contains(port + BUS_PORT_OFFSET)
                    && isFree(port) && isFree(port + BUS_PORT_OFFSET)) {
                return port;
            }
        }
        throw new IllegalStateException("no free pair of ports p and p+" + BUS_PORT_OFFSET + " found among "
                + PORT_CANDIDATES + " candidates in " + FIRST_PORT + "-" + (FIRST_PORT + PORT_RANGE - 1));
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(RedisServer.HOST, port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
