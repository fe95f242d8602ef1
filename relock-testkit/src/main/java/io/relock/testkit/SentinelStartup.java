package io.relock.testkit;

import static io.relock.testkit.TopologySupport.info;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a {@link SentinelTopology} from its builder's settings, defaults filled in: the data
 * nodes, then (once the replicas are online) a config file per Sentinel and the Sentinels, and
 * waits until the topology is settled; whatever was started is stopped if that fails.
 *
 * @param binary the redis-server binary; null for the one {@link RedisBinary#locate()} finds
 */
record SentinelStartup(String masterName, int replicas, int sentinels, int quorum, Duration downAfter,
        Duration failoverTimeout, Duration timeout, Path binary) {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelTopology.class);

    /**
     * Starts the topology and returns it once it is settled.
     *
     * @throws IllegalStateException if a server does not start, or the topology is not settled in time
     * @throws UncheckedIOException if the topology's directory or files cannot be written
     */
    SentinelTopology start() {
        Path directory = TopologySupport.createDirectory("sentinel-");
        List<RedisServer> started = new ArrayList<>();
        try {
            RedisServer master = dataNode().start();
            started.add(master);
            List<RedisServer> dataNodes = new ArrayList<>(List.of(master));
            for (int i = 0; i < replicas; i++) {
                RedisServer replica = dataNode().replicaOf(master).start();
                started.add(replica);
                dataNodes.add(replica);
            }
            TopologySupport.await("replicas online", timeout, () -> {
                SentinelChecks.requireReplicasOnline(master, info(master, "replication"), replicas);
                return Boolean.TRUE;
            }, started);
            String config = sentinelConfig(master);
            List<RedisServer> sentinelServers = new ArrayList<>();
            for (int i = 0; i < sentinels; i++) {
                Path file = directory.resolve("sentinel-" + i + ".conf");
                Files.writeString(file, config, StandardCharsets.UTF_8);
                RedisServer sentinel = server().configFile(file).sentinel().start();
                started.add(sentinel);
                sentinelServers.add(sentinel);
                readInfoEverySecond(sentinel);
            }
            SentinelTopology topology = new SentinelTopology(masterName, quorum, dataNodes, sentinelServers, timeout, directory);
            topology.awaitHealthy(timeout);
            LOG.debug("started {}", topology);
            return topology;
        } catch (IOException e) {
            UncheckedIOException failure = new UncheckedIOException("cannot write a sentinel config file in " + directory, e);
            TopologySupport.stopAll(started, failure);
            Workspace.deleteQuietly(directory);
            throw failure;
        } catch (RuntimeException e) {
            TopologySupport.stopAll(started, e);
            Workspace.deleteQuietly(directory);
            throw e;
        }
    }

    /**
     * Has {@code sentinel} read each server's INFO every second rather than every 10 s: a
     * failover is over only once the Sentinels have seen every replica follow the new master,
     * which they learn from INFO. Sentinels before Redis 7 lack {@code SENTINEL DEBUG}; they
     * keep Sentinel's period, and their failovers take longer to settle.
     */
    static void readInfoEverySecond(RedisServer sentinel) {
        try {
            sentinel.command("SENTINEL", "DEBUG", "INFO-PERIOD", "1000");
        } catch (RedisServer.CommandException unsupported) {
            LOG.debug("{} keeps its INFO period: {}", sentinel, unsupported.getMessage());
        }
    }

    private RedisServer.Builder server() {
        RedisServer.Builder builder = RedisServer.builder();
        return binary == null ? builder : builder.binary(binary);
    }

    /** Replication without a delay or a disk: replicas sync at once, and only from memory. */
    private RedisServer.Builder dataNode() {
        return server().arg("repl-diskless-sync", "yes").arg("repl-diskless-sync-delay", "0");
    }

    private String sentinelConfig(RedisServer master) {
        long down = downAfter.toMillis();
        long failover = failoverTimeout.toMillis();
        return String.join("\n",
                "# Written by the Relock testkit; Sentinel adds what it learns.",
                "sentinel monitor " + masterName + " " + master.host() + " " + master.port() + " " + quorum,
                "sentinel down-after-milliseconds " + masterName + " " + down,
                "sentinel failover-timeout " + masterName + " " + failover,
                "sentinel parallel-syncs " + masterName + " 1",
                "");
    }
}
