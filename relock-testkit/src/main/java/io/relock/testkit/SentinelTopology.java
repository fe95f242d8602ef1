package io.relock.testkit;

import static io.relock.testkit.TopologySupport.probe;
import static io.relock.testkit.TopologySupport.reachable;

import io.relock.testkit.TopologySupport.NotReady;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 * <p>{@link #start()} returns once the topology is settled, as {@link #awaitHealthy(Duration)}
 * describes: the master has all its replicas online, every replica's link is up, and every
 * Sentinel reports the same master with the same config epoch, knows all replicas and all other
 * Sentinels with none of them down, has last seen every node report the role it has, and is
 * not failing over. The Sentinels monitor the
 * master as {@link #masterName()} with a majority quorum, {@code down-after-milliseconds} 1000
 * and {@code failover-timeout} 5000 (by default) and {@code parallel-syncs} 1, so a killed master
 * is replaced within seconds. On Redis 7 and later each Sentinel also reads the servers' INFO
 * every second instead of every 10 s ({@code SENTINEL DEBUG INFO-PERIOD}, set at start and by
 * {@link #restore()}), so a failover settles sooner. Each Sentinel has its own config file in the topology's
 * directory, which it rewrites with what it learns, and which survives the Sentinel's
 * {@code restart()} and {@code stop()}.
 *
 * <p>Faults are injected on the servers themselves ({@code kill}, {@code pause},
 * {@code restart}). Data nodes do not persist: a restarted one comes back empty. Replicas are
 * started with {@code replicaof} the first master, so a restarted replica follows that node
 * again until a Sentinel reconfigures it (which Sentinel does only after {@code failover-timeout});
 * and a restarted former master comes back as a master until a Sentinel demotes it (after up
 * to ten seconds: Sentinel first waits to hear of newer configurations) — the split brain that
 * clients must survive. {@link #restore()} repairs all of it at once, and demotes a former
 * master the way Sentinel does, closing its clients' connections.
 *
 * <p>Sentinel itself takes its time: after a failover, the old master, if it is still running,
 * becomes a replica of the new one only when a Sentinel next inspects it, about ten seconds
 * later; {@link #awaitHealthy(Duration)} waits for that, and for every Sentinel to have seen it.
 * A Sentinel paused for more than two seconds enters TILT mode when resumed: for 30 seconds it
 * takes no action of its own (such as declaring the master down) and does not update its down
 * flags, which a wait for a settled topology then waits out.
 *
 * <p>Every helper that waits ({@link #start()}, {@link #failover()}, {@link #awaitMasterChange},
 * {@link #awaitHealthy()}, {@link #restore()}) polls the servers for a stated condition, bounded
 * by its timeout, and fails with an {@link IllegalStateException} that names the condition it
 * did not reach, what was missing last and the tails of the servers' logs.
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
    private static final String SETTLED = "a settled sentinel topology";

    private final String masterName;
    private final int quorum;
    private final List<RedisServer> dataNodes; // start order: the first master, then the replicas
    private final List<RedisServer> sentinels;
    private final List<RedisServer> servers; // data nodes, then sentinels
    private final Duration timeout;
    private final Path directory;
    private final SentinelChecks checks;

    SentinelTopology(String masterName, int quorum, List<RedisServer> dataNodes, List<RedisServer> sentinels,
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
        this.checks = new SentinelChecks(this);
    }

    /**
     * Starts a master, {@value #DEFAULT_REPLICAS} replicas and {@value #DEFAULT_SENTINELS}
     * Sentinels, and returns once the topology is settled, as {@link #awaitHealthy(Duration)}
     * describes.
     *
     * @return the running topology
     * @throws IllegalStateException if a server does not start, or the topology is not
     *     settled within {@link #DEFAULT_TIMEOUT}; the message says what was missing and
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

    /** {@return the name under which the Sentinels monitor the master} */
    public String masterName() {
        return masterName;
    }

    /** {@return how many Sentinels must agree that the master is down before a failover} */
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
                return checks.reportedMaster(sentinel);
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

    /** {@return all data nodes — the master and its replicas — in start order: the first master first} */
    public List<RedisServer> dataNodes() {
        return dataNodes;
    }

    /** {@return the Sentinels, in start order} */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /** {@return {@code redis://127.0.0.1:<port>} of each Sentinel, in start order} */
    public List<String> sentinelUris() {
        return sentinels.stream().map(RedisServer::uri).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Returns one URI for all Sentinels and the master name, in the form Lettuce's
     * {@code RedisURI.create} reads: {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2#mymaster}.
     *
     * @return the Sentinel URI, with the master name after {@code #}
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
     * Makes the Sentinels promote a replica ({@code SENTINEL FAILOVER} to the first Sentinel
     * that runs, which needs no quorum) and returns once the failover is over, as
     * {@link #awaitMasterChange} describes. Retried while Sentinel finds no replica good enough
     * yet ({@code NOGOODSLAVE}); a failover already in progress ({@code INPROG}) is awaited
     * instead.
     *
     * <p>The old master, if it runs, is not waited for: it stays a master, accepting writes from
     * the clients still connected to it, until a Sentinel demotes it about ten seconds later (see
     * the class comment) — the split brain that clients must survive. {@link #awaitHealthy()}
     * waits for that; {@link #restore()} does it at once.
     *
     * @param timeout how long to wait at most, for all of it
     * @return the new master
     * @throws IllegalStateException if the failover is not over within {@code timeout} (the
     *     message says what was missing last and includes the servers' log tails), if Sentinel
     *     refuses the failover for another reason, or if no Sentinel answers
     */
    public RedisServer failover(Duration timeout) {
        Settings.requirePositive(timeout, "timeout");
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
                if (!e.getMessage().startsWith("INPROG")) {
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
     * Waits until a failover away from {@code previous} is over. Use it after injecting a fault
     * that makes the Sentinels fail over, such as killing or pausing the master for longer than
     * {@code down-after-milliseconds}. Over means, checked in one probe and repeated every 50 ms:
     * <ul>
     * <li>every Sentinel that runs and is not paused reports the same master other than
     *     {@code previous} ({@code SENTINEL GET-MASTER-ADDR-BY-NAME} and {@code SENTINEL MASTER})
     *     with the same {@code config-epoch}, and flags it just {@code master}: not down, and no
     *     failover in progress on any of them (no {@code failover-state}), so the one that led the
     *     failover has finished reconfiguring the replicas and the others have taken over its
     *     configuration;</li>
     * <li>each of them has heard the new master answer: no PING to it unanswered
     *     ({@code last-ping-sent} 0). A Sentinel counts a PING as unanswered from the moment it
     *     switches to the new master until it has reconnected to it; with a short
     *     {@code down-after-milliseconds} it may declare the new master down meanwhile and start
     *     a second failover at once — which this then waits out too;</li>
     * <li>that master reports {@code role:master};</li>
     * <li>every other data node that runs and is not paused, except {@code previous}, reports it
     *     as its master, with {@code master_link_status:up} and no sync in progress.</li>
     * </ul>
     * {@code previous} itself is not waited for: if it runs, it stays a master until a Sentinel
     * demotes it (see {@link #failover(Duration)}); {@link #awaitHealthy()} and {@link #restore()}
     * wait for that.
     *
     * @param previous the master before the change
     * @param timeout how long to wait at most
     * @return the new master
     * @throws IllegalArgumentException if {@code previous} is not a data node of this topology,
     *     or {@code timeout} is not positive
     * @throws IllegalStateException if the failover is not over within {@code timeout}; the
     *     message names the condition that was missing last (for example "the sentinels still
     *     report port ...") and includes the servers' log tails
     */
    public RedisServer awaitMasterChange(RedisServer previous, Duration timeout) {
        Objects.requireNonNull(previous, "previous must not be null");
        Settings.requirePositive(timeout, "timeout");
        if (!dataNodes.contains(previous)) {
            throw new IllegalArgumentException("previous must be a data node of this topology: " + previous);
        }
        return TopologySupport.await("a new master instead of port " + previous.port(), timeout,
                () -> checks.failedOverFrom(previous), servers);
    }

    /**
     * Same as {@link #awaitHealthy(Duration)} with the builder's timeout (default {@link #DEFAULT_TIMEOUT}).
     */
    public void awaitHealthy() {
        awaitHealthy(timeout);
    }

    /**
     * Waits until the topology is settled — healthy, and with nothing left that would make a
     * Sentinel act on its own shortly after. Settled means, checked in one probe and repeated
     * every 50 ms:
     * <ul>
     * <li>every server runs and is not paused;</li>
     * <li>every Sentinel reports the same master ({@code SENTINEL GET-MASTER-ADDR-BY-NAME} and
     *     {@code SENTINEL MASTER}) with the same {@code config-epoch}, flags it just
     *     {@code master} (not down, no failover in progress: no {@code failover-state}), has no
     *     PING to it unanswered ({@code last-ping-sent} 0; see {@link #awaitMasterChange}) and
     *     last saw it report the master role;</li>
     * <li>every Sentinel knows all other Sentinels, none flagged {@code s_down}, {@code o_down}
     *     or {@code disconnected};</li>
     * <li>every Sentinel knows exactly the other data nodes as replicas, each flagged just
     *     {@code slave} (not down or disconnected, nothing left from a failover), and last saw
     *     each report the replica role, that master's address and its link up — a Sentinel that
     *     still takes a demoted node for a master converts it again, even in the middle of a later
     *     failover, which aborts that failover;</li>
     * <li>the master reports {@code role:master} and every other data node as an online replica;
     *     every other data node reports it as its master, with {@code master_link_status:up} and
     *     no sync in progress.</li>
     * </ul>
     * A Sentinel learns a node's role from {@code INFO} every 10 seconds, so after a
     * {@link #failover()} with the old master running this returns only once a Sentinel has
     * demoted it (about 10 seconds after the failover) and every Sentinel has since seen it report
     * the replica role (up to 10 seconds more, for the Sentinel that demoted it): about 20
     * seconds. A Sentinel that was paused for more than two seconds is in TILT mode for 30 seconds
     * after it resumes and does not update its down flags meanwhile.
     *
     * @param timeout how long to wait at most
     * @throws IllegalArgumentException if {@code timeout} is not positive
     * @throws IllegalStateException if it is not settled within {@code timeout}; the message
     *     names the condition that was missing last and includes the servers' log tails
     */
    public void awaitHealthy(Duration timeout) {
        Settings.requirePositive(timeout, "timeout");
        TopologySupport.await(SETTLED, timeout, () -> {
            checks.checkSettled();
            return Boolean.TRUE;
        }, servers);
    }

    /**
     * Repairs whatever tests did to the topology and waits until it is settled, as
     * {@link #awaitHealthy(Duration)} describes: resumes paused servers and restarts stopped or
     * killed ones (data nodes come back empty); then, in each probe of the wait and only while
     * every Sentinel agrees on the master and none is failing over, does what Sentinel would do,
     * only sooner:
     * <ul>
     * <li>a master that reports the replica role is made a master again ({@code REPLICAOF NO ONE});</li>
     * <li>any other data node that reports the master role — a restarted or resumed former
     *     master — is demoted as Sentinel demotes it: {@code REPLICAOF} the master and, in the
     *     same transaction, {@code CLIENT KILL ... TYPE normal} and {@code TYPE pubsub} of the
     *     connections open to it ({@code SKIPME yes}; the Sentinels' own connections and the
     *     replication links stay), so that its clients reconnect and ask where the master is
     *     instead of getting {@code READONLY};</li>
     * <li>a replica of another node is pointed at the master ({@code REPLICAOF}).</li>
     * </ul>
     * It returns only once the Sentinels have seen the result (a demoted node reporting the
     * replica role, which they learn within 10 seconds) and the demoted node has caught up
     * (link up, no sync in progress); so a failover right after it promotes the node it chooses
     * and no other. The master stays where the Sentinels have it; data is not removed
     * ({@link #flushAll()} does).
     *
     * @throws IllegalStateException if a server does not restart, or the topology is not settled
     *     within the builder's timeout (default {@link #DEFAULT_TIMEOUT}); the message names the
     *     condition that was missing last and includes the servers' log tails
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
                if (sentinels.contains(server)) {
                    SentinelStartup.readInfoEverySecond(server);
                }
            }
        }
        TopologySupport.await(SETTLED + " after restore()", timeout, () -> {
            checks.repairRoles();
            checks.checkSettled();
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
         * @param replicas the number of replicas, at least 0
         * @return this builder
         * @throws IllegalArgumentException if {@code replicas} is negative
         * @throws IllegalStateException if it was already set
         */
        public Builder replicas(int replicas) {
            if (replicas < 0) {
                throw new IllegalArgumentException("replicas must not be negative: " + replicas);
            }
            this.replicas = Settings.once(this.replicas, replicas, "replicas");
            return this;
        }

        /**
         * Sets the number of Sentinels (default {@value #DEFAULT_SENTINELS}).
         *
         * @param sentinels the number of Sentinels, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code sentinels} is less than 1
         * @throws IllegalStateException if it was already set
         */
        public Builder sentinels(int sentinels) {
            if (sentinels < 1) {
                throw new IllegalArgumentException("sentinels must be at least 1: " + sentinels);
            }
            this.sentinels = Settings.once(this.sentinels, sentinels, "sentinels");
            return this;
        }

        /**
         * Sets how many Sentinels must agree that the master is down (default: a majority of them).
         *
         * @param quorum how many Sentinels must agree, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code quorum} is less than 1 (more Sentinels
         *     than there are is rejected by {@link #start()})
         * @throws IllegalStateException if it was already set
         */
        public Builder quorum(int quorum) {
            if (quorum < 1) {
                throw new IllegalArgumentException("quorum must be at least 1: " + quorum);
            }
            this.quorum = Settings.once(this.quorum, quorum, "quorum");
            return this;
        }

        /**
         * Sets the name under which the Sentinels monitor the master (default {@value #DEFAULT_MASTER_NAME}).
         *
         * @param masterName the name under which the Sentinels monitor the master
         * @return this builder
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
            this.masterName = Settings.once(this.masterName, masterName, "masterName");
            return this;
        }

        /**
         * Sets Sentinel's {@code down-after-milliseconds} (default 1 s): how long the master
         * must not answer before a Sentinel considers it down.
         *
         * @param downAfter the down-after time, at least a millisecond
         * @return this builder
         * @throws IllegalArgumentException if it is shorter than a millisecond
         * @throws IllegalStateException if it was already set
         */
        public Builder downAfter(Duration downAfter) {
            this.downAfter = Settings.once(this.downAfter, Settings.requireMillis(downAfter, "downAfter"), "downAfter");
            return this;
        }

        /**
         * Sets Sentinel's {@code failover-timeout} (default 5 s), which also spaces retries of a
         * failed failover (twice this) and delays the repair of misconfigured replicas.
         *
         * @param failoverTimeout the failover timeout, at least a millisecond
         * @return this builder
         * @throws IllegalArgumentException if it is shorter than a millisecond
         * @throws IllegalStateException if it was already set
         */
        public Builder failoverTimeout(Duration failoverTimeout) {
            this.failoverTimeout = Settings.once(this.failoverTimeout, Settings.requireMillis(failoverTimeout, "failoverTimeout"),
                    "failoverTimeout");
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
         * Uses this redis-server binary for every server instead of the one {@link RedisBinary#locate()} finds.
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
         * Starts the data nodes, waits until the replicas are online (so that the Sentinels see
         * them at once), starts the Sentinels, and returns once the topology is settled, as
         * {@link SentinelTopology#awaitHealthy(Duration)} describes.
         *
         * @return the running topology
         * @throws IllegalArgumentException if the quorum is larger than the number of Sentinels
         * @throws IllegalStateException if a server does not start, or the topology is not
         *     settled within the timeout; the message says what was missing and includes the
         *     servers' log tails. Whatever was started is stopped.
         * @throws UncheckedIOException if the topology's directory or files cannot be written
         */
        public SentinelTopology start() {
            int sentinelCount = sentinels == null ? DEFAULT_SENTINELS : sentinels;
            int agreeing = quorum == null ? sentinelCount / 2 + 1 : quorum;
            if (agreeing > sentinelCount) {
                throw new IllegalArgumentException("quorum must not exceed the number of sentinels (" + sentinelCount + "): "
                        + agreeing);
            }
            return new SentinelStartup(masterName == null ? DEFAULT_MASTER_NAME : masterName,
                    replicas == null ? DEFAULT_REPLICAS : replicas, sentinelCount, agreeing,
                    downAfter == null ? DEFAULT_DOWN_AFTER : downAfter,
                    failoverTimeout == null ? DEFAULT_FAILOVER_TIMEOUT : failoverTimeout,
                    timeout == null ? DEFAULT_TIMEOUT : timeout, binary).start();
        }
    }
}
