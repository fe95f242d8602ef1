package io.relock.testkit;

import static io.relock.testkit.TopologySupport.info;
import static io.relock.testkit.TopologySupport.pairs;
import static io.relock.testkit.TopologySupport.probe;
import static io.relock.testkit.TopologySupport.reachable;
import static io.relock.testkit.TopologySupport.requireReachable;

import io.relock.testkit.TopologySupport.NotReady;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis Sentinel group for tests: a master, its replicas and the Sentinels that watch it,
 * each a real {@link RedisServer} on a free loopback port.
 *
 * <pre>{@code
 * try (SentinelTopology topology = SentinelTopology.start()) {   // 1 master, 2 replicas, 3 sentinels
 *     String uri = topology.sentinelUri();                     // redis-sentinel://127.0.0.1:p1,...#mymaster
 *     RedisServer first = topology.master();
 *     RedisServer second = topology.failover();                // SENTINEL FAILOVER, returns the new master
 *     second.kill();                                           // the sentinels elect another one
 *     RedisServer third = topology.awaitMasterChange(second, Duration.ofSeconds(30));
 *     topology.restore();                                      // everything back, healthy
 * }
 * }</pre>
 *
 * <p>{@link #start()} returns once the topology is healthy: the master has all its replicas
 * online, every replica's link is up, and every Sentinel reports the same master, with all
 * replicas and all other Sentinels known and none of them down. The Sentinels monitor the
 * master as {@link #masterName()} with a majority quorum, {@code down-after-milliseconds} 1000
 * and {@code failover-timeout} 5000 (by default) and {@code parallel-syncs} 1, so a killed master
 * is replaced within seconds. Each Sentinel has its own config file in the topology's
 * directory, which it rewrites with what it learns, and which survives the Sentinel's
 * {@code restart()} and {@code stop()}.
 *
 * <p>Faults are injected on the servers themselves ({@code kill}, {@code pause},
 * {@code restart}). Data nodes do not persist: a restarted one comes back empty. Replicas are
 * started with {@code replicaof} the first master, so a restarted replica follows that node
 * again until a Sentinel reconfigures it (which Sentinel does only after {@code failover-timeout});
 * and a restarted former master comes back as a master until a Sentinel demotes it (after up
 * to ten seconds: Sentinel first waits to hear of newer configurations) — the split brain that
 * clients must survive. {@link #restore()} repairs all of it at once.
 *
 * <p>Sentinel itself takes its time: after a failover, the old master, if it is still running,
 * becomes a replica of the new one only when a Sentinel next inspects it, about ten seconds
 * later; {@link #awaitHealthy(Duration)} waits for that. A Sentinel paused for more than two
 * seconds enters TILT mode when resumed: for 30 seconds it takes no action of its own (such as
 * declaring the master down), which the health checks here do not see.
 *
 * <p>Thread-safe. Every wait is bounded; every process is tracked so that none outlives the JVM.
 */
public final class SentinelTopology implements AutoCloseable {

    /** The name under which the Sentinels monitor the master, unless the builder says otherwise. */
    public static final String DEFAULT_MASTER_NAME = "mymaster";

    /** Number of replicas, unless the builder says otherwise. */
    public static final int DEFAULT_REPLICAS = 2;

    /** Number of Sentinels, unless the builder says otherwise. */
    public static final int DEFAULT_SENTINELS = 3;

    /** Sentinel's {@code down-after-milliseconds}, unless the builder says otherwise. */
    public static final Duration DEFAULT_DOWN_AFTER = Duration.ofSeconds(1);

    /** Sentinel's {@code failover-timeout}, unless the builder says otherwise. */
    public static final Duration DEFAULT_FAILOVER_TIMEOUT = Duration.ofSeconds(5);

    /** How long {@link #start()}, {@link #failover()} and {@link #restore()} wait, unless the builder says otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private static final Logger LOG = LoggerFactory.getLogger(SentinelTopology.class);
    private static final Pattern MASTER_NAME = Pattern.compile("[A-Za-z0-9._-]+");
    private static final String HEALTHY = "a healthy sentinel topology";

    private final String masterName;
    private final int quorum;
    private final List<RedisServer> dataNodes; // start order: the first master, then the replicas
    private final List<RedisServer> sentinels;
    private final List<RedisServer> servers; // data nodes, then sentinels
    private final Duration timeout;
    private final Path directory;

    private SentinelTopology(String masterName, int quorum, List<RedisServer> dataNodes, List<RedisServer> sentinels,
            Duration timeout, Path directory) {
        this.masterName = masterName;
        this.quorum = quorum;
        this.dataNodes = List.copyOf(dataNodes);
        this.sentinels = List.copyOf(sentinels);
        List<RedisServer> all = new ArrayList<>(dataNodes);
        all.addAll(sentinels);
        this.servers = List.copyOf(all);
        this.timeout = timeout;
        this.directory = directory;
    }

    /**
     * Starts a master, {@value #DEFAULT_REPLICAS} replicas and {@value #DEFAULT_SENTINELS}
     * Sentinels, and returns once the topology is healthy.
     *
     * @return the running topology
     * @throws IllegalStateException if a server does not start, or the topology is not
     *     healthy within {@link #DEFAULT_TIMEOUT}; the message says what was missing and
     *     includes the tails of the servers' logs. Whatever was started is stopped.
     */
    public static SentinelTopology start() {
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

    /** Returns the name under which the Sentinels monitor the master. */
    public String masterName() {
        return masterName;
    }

    /** Returns how many Sentinels must agree that the master is down before a failover. */
    public int quorum() {
        return quorum;
    }

    /**
     * Returns the current master, as the first Sentinel that answers reports it
     * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}). During a failover, Sentinels may disagree for
     * a moment; {@link #awaitMasterChange} waits until they all agree.
     *
     * @return the data node the Sentinels report as master
     * @throws IllegalStateException if no Sentinel answers, or the one that does reports an
     *     address that is not one of this topology's data nodes
     */
    public RedisServer master() {
        List<String> failures = new ArrayList<>();
        for (RedisServer sentinel : sentinels) {
            if (!reachable(sentinel)) {
                failures.add(sentinel.port() + ": not running or paused");
                continue;
            }
            try {
                return reportedMaster(sentinel);
            } catch (UncheckedIOException | RedisServer.CommandException | NotReady e) {
                failures.add(sentinel.port() + ": " + e.getMessage());
            }
        }
        throw new IllegalStateException("no sentinel reports the master of '" + masterName + "': " + failures);
    }

    /**
     * Returns the data nodes that are not the current {@linkplain #master() master}, in start order.
     *
     * @return the replicas, as far as the Sentinels are concerned
     * @throws IllegalStateException as {@link #master()}
     */
    public List<RedisServer> replicas() {
        RedisServer master = master();
        return dataNodes.stream().filter(node -> node != master).collect(Collectors.toUnmodifiableList());
    }

    /** Returns all data nodes — the master and its replicas — in start order: the first master first. */
    public List<RedisServer> dataNodes() {
        return dataNodes;
    }

    /** Returns the Sentinels, in start order. */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /** Returns {@code redis://127.0.0.1:<port>} of each Sentinel, in start order. */
    public List<String> sentinelUris() {
        return sentinels.stream().map(RedisServer::uri).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns one URI for all Sentinels and the master name, in the form Lettuce's
     * {@code RedisURI.create} reads: {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2#mymaster}.
     */
    public String sentinelUri() {
        return "redis-sentinel://" + sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","))
                + "#" + masterName;
    }

    /**
     * Same as {@link #failover(Duration)} with the builder's timeout (default {@link #DEFAULT_TIMEOUT}).
     *
     * @return the new master
     */
    public RedisServer failover() {
        return failover(timeout);
    }

    /**
     * Makes the Sentinels promote a replica ({@code SENTINEL FAILOVER}, which needs no quorum)
     * and returns once every Sentinel that answers reports the new master and that master
     * reports {@code role:master}. The old master, if running, becomes a replica later (see
     * the class comment). Retried while Sentinel finds no replica good enough yet; a failover
     * already in progress is awaited instead.
     *
     * @param timeout how long to wait at most
     * @return the new master
     * @throws IllegalStateException if the master does not change within {@code timeout}
     *     (the message includes the servers' log tails), or Sentinel refuses the failover for
     *     another reason
     */
    public RedisServer failover(Duration timeout) {
        requirePositive(timeout, "timeout");
        long deadline = System.nanoTime() + timeout.toNanos();
        RedisServer previous = master();
        TopologySupport.await("SENTINEL FAILOVER accepted", timeout, () -> {
            RedisServer sentinel = sentinels.stream().filter(TopologySupport::reachable).findFirst()
                    .orElseThrow(() -> new NotReady("no sentinel is running and not paused"));
            try {
                probe(sentinel, "SENTINEL", "FAILOVER", masterName);
            } catch (RedisServer.CommandException e) {
                if (e.getMessage().startsWith("NOGOODSLAVE")) {
                    throw new NotReady("sentinel on port " + sentinel.port() + ": " + e.getMessage());
                }
                if (!e.getMessage().startsWith("INPROGRESS")) {
                    throw new IllegalStateException("SENTINEL FAILOVER refused by sentinel on port " + sentinel.port()
                            + ": " + e.getMessage(), e);
                }
            }
            return Boolean.TRUE;
        }, servers);
        RedisServer current = awaitMasterChange(previous, TopologySupport.left(deadline));
        LOG.debug("sentinel failover of '{}' from port {} to port {}", masterName, previous.port(), current.port());
        return current;
    }

    /**
     * Waits until every Sentinel that answers reports a master other than {@code previous} —
     * the same one — and that master reports {@code role:master}. Use it after injecting a
     * fault that makes the Sentinels fail over, such as killing or pausing the master for
     * longer than {@code down-after-milliseconds}.
     *
     * @param previous the master before the change
     * @param timeout how long to wait at most
     * @return the new master
     * @throws IllegalArgumentException if {@code previous} is not a data node of this topology,
     *     or {@code timeout} is not positive
     * @throws IllegalStateException if the master does not change within {@code timeout}; the
     *     message includes the servers' log tails
     */
    public RedisServer awaitMasterChange(RedisServer previous, Duration timeout) {
        Objects.requireNonNull(previous, "previous must not be null");
        requirePositive(timeout, "timeout");
        if (!dataNodes.contains(previous)) {
            throw new IllegalArgumentException("previous must be a data node of this topology: " + previous);
        }
        return TopologySupport.await("a new master instead of port " + previous.port(), timeout, () -> {
            RedisServer current = agreedMaster();
            if (current == previous) {
                throw new NotReady("the sentinels still report port " + previous.port());
            }
            String role = info(current, "replication").get("role");
            if (!"master".equals(role)) {
                throw new NotReady("the sentinels report port " + current.port() + ", which reports role " + role);
            }
            return current;
        }, servers);
    }

    /**
     * Same as {@link #awaitHealthy(Duration)} with the builder's timeout (default {@link #DEFAULT_TIMEOUT}).
     */
    public void awaitHealthy() {
        awaitHealthy(timeout);
    }

    /**
     * Waits until the topology is healthy, as after {@link #start()}: every server running and
     * not paused; every Sentinel reporting the same master, not flagged down or failing over,
     * knowing all replicas (none of them down) and all other Sentinels; the master reporting
     * every other data node as an online replica; every replica's link to it up.
     *
     * @param timeout how long to wait at most
     * @throws IllegalStateException if it is not healthy within {@code timeout}; the message
     *     says what was missing last and includes the servers' log tails
     */
    public void awaitHealthy(Duration timeout) {
        requirePositive(timeout, "timeout");
        TopologySupport.await(HEALTHY, timeout, () -> {
            checkHealthy();
            return Boolean.TRUE;
        }, servers);
    }

    /**
     * Repairs whatever tests did to the topology and waits until it is healthy: resumes paused
     * servers, restarts stopped or killed ones (data nodes come back empty), and, once the
     * Sentinels agree on a master and none is failing over, points every data node that
     * disagrees at that master ({@code REPLICAOF}) — what Sentinel would do, only sooner. The
     * master stays where the Sentinels have it; data is not removed ({@link #flushAll()} does).
     *
     * @throws IllegalStateException if a server does not restart, or the topology is not
     *     healthy within the builder's timeout (default {@link #DEFAULT_TIMEOUT})
     */
    public synchronized void restore() {
        for (RedisServer server : servers) {
            if (server.isPaused()) {
                server.resume();
            }
        }
        for (RedisServer server : servers) {
            if (!server.isRunning()) {
                server.restart();
            }
        }
        TopologySupport.await(HEALTHY + " after restore()", timeout, () -> {
            repairRoles();
            checkHealthy();
            return Boolean.TRUE;
        }, servers);
    }

    /**
     * Deletes all keys on the master ({@code FLUSHALL}) and waits until every replica has
     * them deleted too.
     *
     * @throws IllegalStateException if there is no master, or not every replica acknowledges
     *     the deletion within the builder's timeout
     */
    public void flushAll() {
        TopologySupport.flushAndAwaitReplicas(master(), dataNodes.size() - 1, timeout);
    }

    /**
     * Stops every server (Sentinels first, so they do not fail over a master that is merely
     * being stopped) and deletes the topology's directory. May be called again.
     *
     * @throws IllegalStateException if a server cannot be stopped; the others are stopped anyway
     */
    @Override
    public synchronized void close() {
        List<RedisServer> order = new ArrayList<>(sentinels);
        order.addAll(dataNodes);
        RuntimeException failure = TopologySupport.stopAll(order, null);
        Workspace.deleteQuietly(directory);
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "sentinel topology '" + masterName + "': data nodes on ports "
                + dataNodes.stream().map(s -> Integer.toString(s.port())).collect(Collectors.joining(", "))
                + ", sentinels on ports "
                + sentinels.stream().map(s -> Integer.toString(s.port())).collect(Collectors.joining(", "));
    }

    /** Returns the master that {@code sentinel} reports; {@link NotReady} if it reports none or a stranger. */
    private RedisServer reportedMaster(RedisServer sentinel) {
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
                + port + ", which is not a data node of " + this);
    }

    /** Returns the master that every reachable Sentinel reports; {@link NotReady} if they disagree or none answers. */
    private RedisServer agreedMaster() {
        Map<Integer, List<Integer>> reports = new TreeMap<>();
        RedisServer master = null;
        for (RedisServer sentinel : sentinels) {
            if (reachable(sentinel)) {
                master = reportedMaster(sentinel);
                reports.computeIfAbsent(master.port(), port -> new ArrayList<>()).add(sentinel.port());
            }
        }
        if (master == null) {
            throw new NotReady("no sentinel is running and not paused");
        }
        if (reports.size() > 1) {
            throw new NotReady("the sentinels disagree about the master (master port: sentinel ports): " + reports);
        }
        return master;
    }

    private void checkHealthy() {
        for (RedisServer node : dataNodes) {
            requireReachable(node, "data node");
        }
        for (RedisServer sentinel : sentinels) {
            requireReachable(sentinel, "sentinel");
        }
        RedisServer master = agreedMaster();
        int replicas = dataNodes.size() - 1;
        for (RedisServer sentinel : sentinels) {
            Map<String, String> state = pairs(probe(sentinel, "SENTINEL", "MASTER", masterName));
            String where = "sentinel on port " + sentinel.port();
            if (!"master".equals(state.get("flags"))) {
                throw new NotReady(where + " flags the master as " + state.get("flags"));
            }
            expect(where + " knows other sentinels", sentinels.size() - 1, state.get("num-other-sentinels"));
            expect(where + " knows replicas", replicas, state.get("num-slaves"));
            for (Object replica : (List<?>) probe(sentinel, "SENTINEL", "REPLICAS", masterName)) {
                Map<String, String> fields = pairs(replica);
                String flags = fields.get("flags");
                if (flags == null || flags.contains("s_down") || flags.contains("o_down") || flags.contains("disconnected")) {
                    throw new NotReady(where + " flags replica " + fields.get("name") + " as " + flags);
                }
            }
        }
        Map<String, String> replication = info(master, "replication");
        if (!"master".equals(replication.get("role"))) {
            throw new NotReady("master on port " + master.port() + " reports role " + replication.get("role"));
        }
        expect("master on port " + master.port() + " has connected replicas", replicas, replication.get("connected_slaves"));
        for (int i = 0; i < replicas; i++) {
            String replica = replication.get("slave" + i);
            if (replica == null || !replica.contains("state=online")) {
                throw new NotReady("master on port " + master.port() + " reports replica " + i + " as " + replica);
            }
        }
        for (RedisServer node : dataNodes) {
            if (node != master) {
                Map<String, String> own = info(node, "replication");
                if (!"slave".equals(own.get("role")) || !Integer.toString(master.port()).equals(own.get("master_port"))
                        || !"up".equals(own.get("master_link_status"))) {
                    throw new NotReady("replica on port " + node.port() + " reports role " + own.get("role") + ", master port "
                            + own.get("master_port") + ", link " + own.get("master_link_status") + " (master: port "
                            + master.port() + ")");
                }
            }
        }
    }

    /** Points data nodes that disagree with the Sentinels at their master, unless a Sentinel is busy with it. */
    private void repairRoles() {
        RedisServer master = agreedMaster();
        for (RedisServer sentinel : sentinels) {
            String flags = pairs(probe(sentinel, "SENTINEL", "MASTER", masterName)).get("flags");
            if (!"master".equals(flags)) {
                // Down or failing over: changing roles now would fight the Sentinels.
                throw new NotReady("sentinel on port " + sentinel.port() + " flags the master as " + flags);
            }
        }
        for (RedisServer node : dataNodes) {
            Map<String, String> replication = info(node, "replication");
            if (node == master) {
                if (!"master".equals(replication.get("role"))) {
                    LOG.debug("restore: port {} is the master but reports role {}", node.port(), replication.get("role"));
                    probe(node, "REPLICAOF", "NO", "ONE");
                }
            } else if (!"slave".equals(replication.get("role"))
                    || !Integer.toString(master.port()).equals(replication.get("master_port"))) {
                LOG.debug("restore: pointing port {} at master port {}", node.port(), master.port());
                probe(node, "REPLICAOF", master.host(), Integer.toString(master.port()));
            }
        }
    }

    private static void expect(String what, int expected, String actual) {
        if (!Integer.toString(expected).equals(actual)) {
            throw new NotReady(what + ": " + actual + " instead of " + expected);
        }
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + duration);
        }
    }

    /**
     * Configures and starts a {@link SentinelTopology}. Each setting may be given once.
     *
     * <p>Not thread-safe; a builder may start several topologies.
     */
    public static final class Builder {

        private Integer replicas;
        private Integer sentinels;
        private Integer quorum;
        private String masterName;
        private Duration downAfter;
        private Duration failoverTimeout;
        private Duration timeout;
        private Path binary;

        private Builder() {
        }

        /**
         * Sets the number of replicas (default {@value #DEFAULT_REPLICAS}); with none, there is
         * nothing to fail over to.
         *
         * @throws IllegalArgumentException if {@code replicas} is negative
         * @throws IllegalStateException if it was already set
         */
        public Builder replicas(int replicas) {
            if (replicas < 0) {
                throw new IllegalArgumentException("replicas must not be negative: " + replicas);
            }
            if (this.replicas != null) {
                throw new IllegalStateException("replicas was already set to " + this.replicas);
            }
            this.replicas = replicas;
            return this;
        }

        /**
         * Sets the number of Sentinels (default {@value #DEFAULT_SENTINELS}).
         *
         * @throws IllegalArgumentException if {@code sentinels} is less than 1
         * @throws IllegalStateException if it was already set
         */
        public Builder sentinels(int sentinels) {
            if (sentinels < 1) {
                throw new IllegalArgumentException("sentinels must be at least 1: " + sentinels);
            }
            if (this.sentinels != null) {
                throw new IllegalStateException("sentinels was already set to " + this.sentinels);
            }
            this.sentinels = sentinels;
            return this;
        }

        /**
         * Sets how many Sentinels must agree that the master is down (default: a majority of them).
         *
         * @throws IllegalArgumentException if {@code quorum} is less than 1 (more Sentinels
         *     than there are is rejected by {@link #start()})
         * @throws IllegalStateException if it was already set
         */
        public Builder quorum(int quorum) {
            if (quorum < 1) {
                throw new IllegalArgumentException("quorum must be at least 1: " + quorum);
            }
            if (this.quorum != null) {
                throw new IllegalStateException("quorum was already set to " + this.quorum);
            }
            this.quorum = quorum;
            return this;
        }

        /**
         * Sets the name under which the Sentinels monitor the master (default {@value #DEFAULT_MASTER_NAME}).
         *
         * @throws NullPointerException if {@code masterName} is null
         * @throws IllegalArgumentException if it is empty or has characters other than letters,
         *     digits, {@code .}, {@code _} and {@code -}
         * @throws IllegalStateException if it was already set
         */
        public Builder masterName(String masterName) {
            Objects.requireNonNull(masterName, "masterName must not be null");
            if (!MASTER_NAME.matcher(masterName).matches()) {
                throw new IllegalArgumentException("masterName must be letters, digits, '.', '_' or '-': '" + masterName + "'");
            }
            if (this.masterName != null) {
                throw new IllegalStateException("masterName was already set to " + this.masterName);
            }
            this.masterName = masterName;
            return this;
        }

        /**
         * Sets Sentinel's {@code down-after-milliseconds} (default 1 s): how long the master
         * must not answer before a Sentinel considers it down.
         *
         * @throws IllegalArgumentException if it is shorter than a millisecond
         * @throws IllegalStateException if it was already set
         */
        public Builder downAfter(Duration downAfter) {
            requireMillis(downAfter, "downAfter");
            if (this.downAfter != null) {
                throw new IllegalStateException("downAfter was already set to " + this.downAfter);
            }
            this.downAfter = downAfter;
            return this;
        }

        /**
         * Sets Sentinel's {@code failover-timeout} (default 5 s), which also spaces retries of a
         * failed failover (twice this) and delays the repair of misconfigured replicas.
         *
         * @throws IllegalArgumentException if it is shorter than a millisecond
         * @throws IllegalStateException if it was already set
         */
        public Builder failoverTimeout(Duration failoverTimeout) {
            requireMillis(failoverTimeout, "failoverTimeout");
            if (this.failoverTimeout != null) {
                throw new IllegalStateException("failoverTimeout was already set to " + this.failoverTimeout);
            }
            this.failoverTimeout = failoverTimeout;
            return this;
        }

        /**
         * Sets how long {@link #start()}, {@code failover()}, {@code awaitHealthy()},
         * {@code restore()} and {@code flushAll()} wait at most (default {@link #DEFAULT_TIMEOUT}).
         *
         * @throws IllegalArgumentException if it is not positive
         * @throws IllegalStateException if it was already set
         */
        public Builder timeout(Duration timeout) {
            requirePositive(timeout, "timeout");
            if (this.timeout != null) {
                throw new IllegalStateException("timeout was already set to " + this.timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * Uses this redis-server binary for every server instead of the one {@link RedisBinary#locate()} finds.
         *
         * @throws NullPointerException if {@code binary} is null
         * @throws IllegalStateException if it was already set
         */
        public Builder binary(Path binary) {
            Objects.requireNonNull(binary, "binary must not be null");
            if (this.binary != null) {
                throw new IllegalStateException("binary was already set to " + this.binary);
            }
            this.binary = binary;
            return this;
        }

        /**
         * Starts the data nodes, waits until the replicas are online (so that the Sentinels see
         * them at once), starts the Sentinels, and returns once the topology is healthy.
         *
         * @return the running topology
         * @throws IllegalArgumentException if the quorum is larger than the number of Sentinels
         * @throws IllegalStateException if a server does not start, or the topology is not
         *     healthy within the timeout; the message says what was missing and includes the
         *     servers' log tails. Whatever was started is stopped.
         * @throws UncheckedIOException if the topology's directory or files cannot be written
         */
        public SentinelTopology start() {
            int replicaCount = replicas == null ? DEFAULT_REPLICAS : replicas;
            int sentinelCount = sentinels == null ? DEFAULT_SENTINELS : sentinels;
            int agreeing = quorum == null ? sentinelCount / 2 + 1 : quorum;
            if (agreeing > sentinelCount) {
                throw new IllegalArgumentException("quorum must not exceed the number of sentinels (" + sentinelCount + "): "
                        + agreeing);
            }
            String name = masterName == null ? DEFAULT_MASTER_NAME : masterName;
            Duration wait = timeout == null ? DEFAULT_TIMEOUT : timeout;
            Path directory = TopologySupport.createDirectory("sentinel-");
            List<RedisServer> started = new ArrayList<>();
            try {
                RedisServer master = dataNode().start();
                started.add(master);
                List<RedisServer> dataNodes = new ArrayList<>(List.of(master));
                for (int i = 0; i < replicaCount; i++) {
                    RedisServer replica = dataNode().replicaOf(master).start();
                    started.add(replica);
                    dataNodes.add(replica);
                }
                TopologySupport.await("replicas online", wait, () -> {
                    Map<String, String> replication = info(master, "replication");
                    expect("master on port " + master.port() + " has connected replicas", replicaCount,
                            replication.get("connected_slaves"));
                    for (int i = 0; i < replicaCount; i++) {
                        String replica = replication.get("slave" + i);
                        if (replica == null || !replica.contains("state=online")) {
                            throw new NotReady("master reports replica " + i + " as " + replica);
                        }
                    }
                    return Boolean.TRUE;
                }, started);
                String config = sentinelConfig(name, master, agreeing);
                List<RedisServer> sentinelServers = new ArrayList<>();
                for (int i = 0; i < sentinelCount; i++) {
                    Path file = directory.resolve("sentinel-" + i + ".conf");
                    Files.writeString(file, config, StandardCharsets.UTF_8);
                    RedisServer sentinel = server().configFile(file).sentinel().start();
                    started.add(sentinel);
                    sentinelServers.add(sentinel);
                }
                SentinelTopology topology = new SentinelTopology(name, agreeing, dataNodes, sentinelServers, wait, directory);
                topology.awaitHealthy(wait);
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

        private RedisServer.Builder server() {
            RedisServer.Builder builder = RedisServer.builder();
            return binary == null ? builder : builder.binary(binary);
        }

        /** Replication without a delay or a disk: replicas sync at once, and only from memory. */
        private RedisServer.Builder dataNode() {
            return server().arg("repl-diskless-sync", "yes").arg("repl-diskless-sync-delay", "0");
        }

        private String sentinelConfig(String name, RedisServer master, int agreeing) {
            long down = (downAfter == null ? DEFAULT_DOWN_AFTER : downAfter).toMillis();
            long failover = (failoverTimeout == null ? DEFAULT_FAILOVER_TIMEOUT : failoverTimeout).toMillis();
            return String.join("\n",
                    "# Written by the Relock testkit; Sentinel adds what it learns.",
                    "sentinel monitor " + name + " " + master.host() + " " + master.port() + " " + agreeing,
                    "sentinel down-after-milliseconds " + name + " " + down,
                    "sentinel failover-timeout " + name + " " + failover,
                    "sentinel parallel-syncs " + name + " 1",
                    "");
        }

        private static void requireMillis(Duration duration, String name) {
            Objects.requireNonNull(duration, name + " must not be null");
            if (duration.toMillis() < 1) {
                throw new IllegalArgumentException(name + " must be at least a millisecond: " + duration);
            }
        }
    }
}
