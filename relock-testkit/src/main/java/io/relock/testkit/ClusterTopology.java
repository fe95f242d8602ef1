package io.relock.testkit;

import static io.relock.testkit.TopologySupport.probe;
import static io.relock.testkit.TopologySupport.reachable;

import io.relock.testkit.ClusterNodes.Entry;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis Cluster for tests: masters that share the 16384 slots and replicas of them, each a
 * real {@link RedisServer} on a loopback port.
 *
 * <pre>{@code
 * try (ClusterTopology cluster = ClusterTopology.start()) {    // 3 masters, 1 replica each
 *     List<String> seeds = cluster.uris();
 *     RedisServer master = cluster.masterFor("{order:42}:lock");
 *     RedisServer promoted = cluster.failover(master);          // CLUSTER FAILOVER on its replica
 *     promoted.kill();                                         // its replica takes over after the node timeout
 *     cluster.restore();                                       // the killed node rejoins, as a replica
 * }
 * }</pre>
 *
 * <p>The cluster is formed without {@code redis-cli}, so it also works with the binary from
 * embedded-redis: slots are split evenly ({@code CLUSTER ADDSLOTS}), each node gets its own
 * config epoch ({@code CLUSTER SET-CONFIG-EPOCH}), the first node meets the others
 * ({@code CLUSTER MEET}), and each replica follows its master ({@code CLUSTER REPLICATE}); the
 * i-th replica follows master {@code i % masters}. {@link #start()} returns once the cluster is
 * settled, as {@link #awaitHealthy(Duration)} describes: every node reports
 * {@code cluster_state:ok} with all slots served, every node's {@code CLUSTER NODES} is the same
 * (slot map, replication, config epochs), none flagged failing, and every master has its
 * replicas online.
 *
 * <p>Nodes run with {@code cluster-node-timeout} 1000 ms by default, so a killed master is
 * replaced by its replica within a few seconds; and with {@code cluster-replica-validity-factor 0},
 * so a replica may take over however long it has been cut off. Each node keeps its cluster
 * configuration ({@code nodes.conf}) in the topology's directory, which survives the node's
 * {@code restart()} and {@code stop()}: a restarted node rejoins with its identity, empty (no
 * persistence), and as a replica if its slots were taken over meanwhile.
 *
 * <p>Ports: the cluster bus of a node listens on its port + 10000 (so the topology also works
 * with Redis 6, which cannot move it); ports are taken from 20000–22767, so both stay below
 * 32768, where Linux starts handing out ports for outgoing connections, and a restarted node
 * finds them free.
 *
 * <p>Every helper that waits ({@link #start()}, {@link #failover(RedisServer)},
 * {@link #awaitHealthy()}, {@link #restore()}) polls the nodes for a stated condition, bounded by
 * its timeout, and fails with an {@link IllegalStateException} that names the condition it did
 * not reach, what was missing last and the tails of the nodes' logs.
 *
 * <p>Thread-safe. Every wait is bounded; every process is tracked so that none outlives the JVM.
 */
public final class ClusterTopology implements AutoCloseable {

    /** Number of hash slots in a Redis Cluster. */
    public static final int SLOTS = 16384;

    /** Number of masters, unless the builder says otherwise. */
    public static final int DEFAULT_MASTERS = 3;

    /** Number of replicas of each master, unless the builder says otherwise. */
    public static final int DEFAULT_REPLICAS_PER_MASTER = 1;

    /** {@code cluster-node-timeout}, unless the builder says otherwise. */
    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(1);

    /** How long {@link #start()}, {@link #failover} and {@link #restore()} wait, unless the builder says otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private static final Logger LOG = LoggerFactory.getLogger(ClusterTopology.class);
    private static final String SETTLED = "a settled cluster";

    private final List<RedisServer> nodes;
    private final int masterCount;
    private final int replicasPerMaster;
    private final Duration timeout;
    private final Path directory;
    private final ClusterChecks checks;

    private ClusterTopology(List<RedisServer> nodes, int masterCount, int replicasPerMaster, Duration timeout, Path directory) {
        this.nodes = List.copyOf(nodes);
        this.masterCount = masterCount;
        this.replicasPerMaster = replicasPerMaster;
        this.timeout = timeout;
        this.directory = directory;
        this.checks = new ClusterChecks(this, this.nodes, masterCount, replicasPerMaster);
    }

    /**
     * Starts {@value #DEFAULT_MASTERS} masters with {@value #DEFAULT_REPLICAS_PER_MASTER}
     * replica each, forms the cluster, and returns once it is settled, as
     * {@link #awaitHealthy(Duration)} describes.
     *
     * @return the running cluster
     * @throws IllegalStateException if a node does not start, or the cluster is not settled
     *     within {@link #DEFAULT_TIMEOUT}; the message says what was missing and includes the
     *     tails of the nodes' logs. Whatever was started is stopped.
     */
    public static ClusterTopology start() {
        return builder().start();
    }

    /**
     * Returns a builder for other sizes, timings or another binary.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the hash slot of {@code key}, as Redis Cluster computes it: CRC16 (XModem) of the
     * key's UTF-8 bytes modulo 16384 — or of its hash tag only, if the key has one: the bytes
     * between the first <code>{</code> and the first <code>}</code> after it, if there is at
     * least one byte between them. So <code>{user1000}.following</code> and
     * <code>{user1000}.followers</code> share a slot.
     *
     * @param key the key
     * @return its slot, from 0 to 16383
     * @throws NullPointerException if {@code key} is null
     */
    public static int slot(String key) {
        Objects.requireNonNull(key, "key must not be null");
        return ClusterSlots.of(key);
    }

    /** {@return every node, in start order: the masters first, then the replicas, as they were started} */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** {@return {@code redis://127.0.0.1:<port>} of every node, in start order} */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uri).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns the nodes that serve slots now, in slot order, as the first node that answers
     * sees it ({@code CLUSTER NODES}); a master that failed but was not replaced yet is still one.
     *
     * @return the masters now, in slot order
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> masters() {
        return checks.view().stream()
                .filter(entry -> entry.isMaster() && entry.slots() > 0)
                .sorted(Comparator.comparingInt(Entry::firstSlot))
                .map(entry -> checks.node(entry.port()))
                .collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns the nodes that are replicas now, in start order, as the first node that answers sees it.
     *
     * @return the replicas now, in start order
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> replicas() {
        Set<Integer> ports = checks.view().stream().filter(entry -> !entry.isMaster()).map(Entry::port).collect(Collectors.toSet());
        return nodes.stream().filter(node -> ports.contains(node.port())).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns the replicas of {@code master} now, in start order, as the first node that answers sees it.
     *
     * @param master a master of this cluster
     * @return {@code master}'s replicas now, in start order; empty if it has none
     * @throws IllegalArgumentException if {@code master} is not a node of this cluster
     * @throws IllegalStateException if no node answers
     */
    public List<RedisServer> replicasOf(RedisServer master) {
        requireNode(master, "master");
        List<Entry> view = checks.view();
        String id = checks.known(view, master).id();
        Set<Integer> ports = view.stream().filter(entry -> id.equals(entry.masterId())).map(Entry::port)
                .collect(Collectors.toSet());
        return nodes.stream().filter(node -> ports.contains(node.port())).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns the master that serves {@code key}'s {@linkplain #slot(String) slot} now, as
     * the first node that answers sees it ({@code CLUSTER SLOTS}).
     *
     * @param key the key
     * @return the master of its slot
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalStateException if no node answers, or none serves the slot
     */
    public RedisServer masterFor(String key) {
        int slot = slot(key);
        RedisServer asked = checks.firstReachable();
        for (Object range : (List<?>) asked.command("CLUSTER", "SLOTS")) {
            List<?> fields = (List<?>) range;
            if ((Long) fields.get(0) <= slot && slot <= (Long) fields.get(1)) {
                return checks.node(((Long) ((List<?>) fields.get(2)).get(1)).intValue());
            }
        }
        throw new IllegalStateException("no node serves slot " + slot + " of '" + key + "', says the node on port "
                + asked.port());
    }

    /**
     * Same as {@link #failover(RedisServer, Duration)} with the builder's timeout (default {@link #DEFAULT_TIMEOUT}).
     *
     * @param master a master of this cluster
     * @return the promoted replica
     */
    public RedisServer failover(RedisServer master) {
        return failover(master, timeout);
    }

    /**
     * Promotes a replica of {@code master}: runs {@code CLUSTER FAILOVER} on its first running
     * replica — a coordinated failover, in which {@code master} stops taking writes until the
     * replica has caught up and then becomes its replica — or {@code CLUSTER FAILOVER FORCE}
     * if {@code master} is down or paused. Returns once the failover is over and every node that
     * answers agrees on it; checked in one probe and repeated every 50 ms:
     * <ul>
     * <li>the replica reports {@code role:master};</li>
     * <li>every node that runs and is not paused reports {@code cluster_state:ok} with all slots
     *     served, knows every node, and reports the same {@code cluster_current_epoch};</li>
     * <li>their {@code CLUSTER NODES} agree: the same master for every slot range, the same
     *     replication (who replicates whom), the same config epoch for every node that answers,
     *     with no node that answers flagged {@code fail}, {@code fail?}, {@code handshake} or
     *     {@code noaddr} and every link to it connected; the masters that answer have distinct
     *     config epochs (so no collision is still to be resolved);</li>
     * <li>the replica serves exactly the slot ranges {@code master} served; {@code master}, if it
     *     answers, is its replica in every view;</li>
     * <li>every replica that answers reports its master's port, {@code master_link_status:up}
     *     and no sync in progress.</li>
     * </ul>
     * A {@code master} that is down or paused is not waited for; {@link #restore()} brings it
     * back as a replica.
     *
     * @param master a master of this cluster
     * @param timeout how long to wait at most
     * @return the promoted replica, now the master of {@code master}'s slots
     * @throws IllegalArgumentException if {@code master} is not a node of this cluster, or not
     *     a master with slots
     * @throws IllegalStateException if it has no replica that runs, or the failover is not over
     *     within {@code timeout}; the message names the condition that was missing last and
     *     includes the nodes' log tails
     */
    public RedisServer failover(RedisServer master, Duration timeout) {
        requireNode(master, "master");
        Settings.requirePositive(timeout, "timeout");
        List<Entry> view = checks.view();
        Entry masterEntry = checks.known(view, master);
        if (!masterEntry.isMaster() || masterEntry.slots() == 0) {
            throw new IllegalArgumentException("master must be a master with slots: port " + master.port() + " has flags "
                    + masterEntry.flags() + " and " + masterEntry.slots() + " slots");
        }
        RedisServer replica = view.stream()
                .filter(entry -> masterEntry.id().equals(entry.masterId()) && !entry.failing())
                .map(entry -> checks.node(entry.port()))
                .filter(TopologySupport::reachable)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("the master on port " + master.port()
                        + " has no replica that is running and not paused"));
        boolean force = !reachable(master);
        if (force) {
            replica.command("CLUSTER", "FAILOVER", "FORCE");
        } else {
            replica.command("CLUSTER", "FAILOVER");
        }
        RedisServer promoted = TopologySupport.await("port " + replica.port() + " promoted in place of port " + master.port(),
                timeout, () -> checks.promoted(replica, master, masterEntry), nodes);
        LOG.debug("cluster failover from port {} to port {}{}", master.port(), replica.port(), force ? " (forced)" : "");
        return promoted;
    }

    /**
     * Same as {@link #awaitHealthy(Duration)} with the builder's timeout (default {@link #DEFAULT_TIMEOUT}).
     */
    public void awaitHealthy() {
        awaitHealthy(timeout);
    }

    /**
     * Waits until the cluster is settled, as after {@link #start()}; checked in one probe and
     * repeated every 50 ms:
     * <ul>
     * <li>every node runs and is not paused, reports {@code cluster_state:ok} with all slots
     *     served, knows every node, and reports the same {@code cluster_current_epoch};</li>
     * <li>every node's {@code CLUSTER NODES} is the same: the same master for every slot range,
     *     the same replication (who replicates whom), the same config epoch for every node, no
     *     node flagged {@code fail}, {@code fail?}, {@code handshake} or {@code noaddr}, every
     *     link connected; the masters have distinct config epochs;</li>
     * <li>as many masters with slots as configured, each with at least the configured number of
     *     replicas; every replica reports its master's port, {@code master_link_status:up} and
     *     no sync in progress.</li>
     * </ul>
     *
     * @param timeout how long to wait at most
     * @throws IllegalArgumentException if {@code timeout} is not positive
     * @throws IllegalStateException if it is not settled within {@code timeout}; the message
     *     names the condition that was missing last and includes the nodes' log tails
     */
    public void awaitHealthy(Duration timeout) {
        Settings.requirePositive(timeout, "timeout");
        TopologySupport.await(SETTLED, timeout, () -> {
            checks.checkAgreement(true);
            return Boolean.TRUE;
        }, nodes);
    }

    /**
     * Repairs whatever tests did to the cluster and waits until it is settled, as
     * {@link #awaitHealthy(Duration)} describes: resumes paused nodes and restarts stopped or
     * killed ones, which rejoin with their {@code nodes.conf} (empty of data); a former master
     * whose slots were taken over meanwhile learns so from the others and becomes a replica by
     * itself (its clients are redirected with {@code MOVED}). Masters stay where failovers put
     * them; data is not removed ({@link #flushAll()} does).
     *
     * @throws IllegalStateException if a node does not restart, or the cluster is not settled
     *     within the builder's timeout (default {@link #DEFAULT_TIMEOUT}); the message names the
     *     condition that was missing last and includes the nodes' log tails
     */
    public synchronized void restore() {
        for (RedisServer node : nodes) {
            if (node.isPaused()) {
                node.resume();
            }
        }
        for (RedisServer node : nodes) {
            if (!node.isRunning()) {
                node.restart();
            }
        }
        awaitHealthy(timeout);
    }

    /**
     * Deletes all keys on every master ({@code FLUSHALL}) and waits until its replicas have
     * them deleted too.
     *
     * @throws IllegalStateException if no node answers, or not every replica acknowledges the
     *     deletion within the builder's timeout
     */
    public void flushAll() {
        List<Entry> view = checks.view();
        for (Entry master : view) {
            if (master.isMaster() && master.slots() > 0) {
                int replicas = (int) view.stream().filter(entry -> master.id().equals(entry.masterId()) && !entry.failing())
                        .count();
                TopologySupport.flushAndAwaitReplicas(checks.node(master.port()), replicas, timeout);
            }
        }
    }

    /**
     * Stops every node and deletes the topology's directory, {@code nodes.conf} files
     * included. May be called again.
     *
     * @throws IllegalStateException if a node cannot be stopped; the others are stopped anyway
     */
    @Override
    public synchronized void close() {
        RuntimeException failure = TopologySupport.stopAll(nodes, null);
        Workspace.deleteQuietly(directory);
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "cluster of " + masterCount + " masters with " + replicasPerMaster + " replicas each, on ports "
                + nodes.stream().map(node -> Integer.toString(node.port())).collect(Collectors.joining(", "));
    }

    private void requireNode(RedisServer server, String name) {
        Objects.requireNonNull(server, name + " must not be null");
        if (!nodes.contains(server)) {
            throw new IllegalArgumentException(name + " must be a node of this cluster: " + server);
        }
    }

    /**
     * Configures and starts a {@link ClusterTopology}. Each setting may be given once.
     *
     * <p>Not thread-safe; a builder may start several clusters.
     */
    public static final class Builder {

        private Integer masters;
        private Integer replicasPerMaster;
        private Duration nodeTimeout;
        private Duration timeout;
        private Path binary;

        private Builder() {
        }

        /**
         * Sets the number of masters (default {@value #DEFAULT_MASTERS}). A failover needs
         * the votes of a majority of masters, so with fewer than three, a killed master is not
         * replaced (a forced {@link ClusterTopology#failover} still works).
         *
         * @param masters the number of masters, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code masters} is less than 1
         * @throws IllegalStateException if it was already set
         */
        public Builder masters(int masters) {
            if (masters < 1) {
                throw new IllegalArgumentException("masters must be at least 1: " + masters);
            }
            this.masters = Settings.once(this.masters, masters, "masters");
            return this;
        }

        /**
         * Sets the number of replicas of each master (default {@value #DEFAULT_REPLICAS_PER_MASTER}).
         *
         * @param replicasPerMaster the number of replicas of each master, at least 0
         * @return this builder
         * @throws IllegalArgumentException if {@code replicasPerMaster} is negative
         * @throws IllegalStateException if it was already set
         */
        public Builder replicasPerMaster(int replicasPerMaster) {
            if (replicasPerMaster < 0) {
                throw new IllegalArgumentException("replicasPerMaster must not be negative: " + replicasPerMaster);
            }
            this.replicasPerMaster = Settings.once(this.replicasPerMaster, replicasPerMaster, "replicasPerMaster");
            return this;
        }

        /**
         * Sets {@code cluster-node-timeout} (default 1 s): how long a node must not answer
         * before it is considered failing and its replica takes over.
         *
         * @param nodeTimeout the node timeout, at least a millisecond
         * @return this builder
         * @throws IllegalArgumentException if it is shorter than a millisecond
         * @throws IllegalStateException if it was already set
         */
        public Builder nodeTimeout(Duration nodeTimeout) {
            this.nodeTimeout = Settings.once(this.nodeTimeout, Settings.requireMillis(nodeTimeout, "nodeTimeout"),
                    "nodeTimeout");
            return this;
        }

        /**
         * Sets how long {@link #start()}, {@code failover()}, {@code awaitHealthy()},
         * {@code restore()} and {@code flushAll()} wait at most (default {@link #DEFAULT_TIMEOUT}).
         *
         * @param timeout how long to wait at most
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         * @throws IllegalStateException if it was already set
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Settings.once(this.timeout, Settings.requirePositive(timeout, "timeout"), "timeout");
            return this;
        }

        /**
         * Uses this redis-server binary for every node instead of the one {@link RedisBinary#locate()} finds.
         *
         * @param binary the path of a redis-server executable
         * @return this builder
         * @throws NullPointerException if {@code binary} is null
         * @throws IllegalStateException if it was already set
         */
        public Builder binary(Path binary) {
            this.binary = Settings.once(this.binary, binary, "binary");
            return this;
        }

        /**
         * Starts the nodes, forms the cluster and returns once it is settled, as
         * {@link ClusterTopology#awaitHealthy(Duration)} describes.
         *
         * @return the running cluster
         * @throws IllegalStateException if a node does not start, or the cluster is not settled
         *     within the timeout; the message says what was missing and includes the nodes'
         *     log tails. Whatever was started is stopped.
         * @throws UncheckedIOException if the topology's directory cannot be created
         */
        public ClusterTopology start() {
            int masterCount = masters == null ? DEFAULT_MASTERS : masters;
            int replicaCount = replicasPerMaster == null ? DEFAULT_REPLICAS_PER_MASTER : replicasPerMaster;
            Duration wait = timeout == null ? DEFAULT_TIMEOUT : timeout;
            long nodeTimeoutMillis = (nodeTimeout == null ? DEFAULT_NODE_TIMEOUT : nodeTimeout).toMillis();
            Path directory = TopologySupport.createDirectory("cluster-");
            List<RedisServer> started = new ArrayList<>();
            try {
                int total = masterCount * (1 + replicaCount);
                for (int i = 0; i < total; i++) {
                    started.add(ClusterFormation.startNode(directory.resolve("nodes-" + i + ".conf"), started, binary,
                            nodeTimeoutMillis));
                }
                ClusterFormation.form(started, masterCount, wait);
                ClusterTopology cluster = new ClusterTopology(started, masterCount, replicaCount, wait, directory);
                cluster.awaitHealthy(wait);
                LOG.debug("started {}", cluster);
                return cluster;
            } catch (RuntimeException e) {
                TopologySupport.stopAll(started, e);
                Workspace.deleteQuietly(directory);
                throw e;
            }
        }
    }
}
