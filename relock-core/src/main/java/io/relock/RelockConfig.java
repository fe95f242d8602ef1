package io.relock;

import io.relock.internal.redis.RedisUris;
import io.relock.internal.support.Args;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * Immutable settings of a {@link Relock} client. Built once with {@link #builder()}:
 *
 * <pre>{@code
 * RelockConfig config = RelockConfig.builder()
 *     .singleServer("redis://127.0.0.1:6379")
 *     .watchdogTimeout(Duration.ofSeconds(30))
 *     .build();
 * }</pre>
 *
 * <p>Every setting has a named default ({@code DEFAULT_*}) except the server, which must be
 * given. The builder rejects a setting given twice; {@link Builder#build()} rejects invalid
 * values, naming the setting. Durations are at most one day.
 */
public final class RelockConfig {

    /** Lease of a lock taken without an explicit lease, renewed every third of it: 30 s. */
    public static final Duration DEFAULT_WATCHDOG_TIMEOUT = Duration.ofSeconds(30);

    /** How long a Redis command may take before it fails with {@link RelockTimeoutException}: 3 s. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(3);

    /** Prefix put before every lock name to form its Redis key: none. */
    public static final String DEFAULT_KEY_PREFIX = "";

    /** First pause of a spin lock's backoff: 5 ms. */
    public static final Duration DEFAULT_SPIN_BACKOFF_INITIAL = Duration.ofMillis(5);

    /** Longest pause of a spin lock's backoff: 500 ms. */
    public static final Duration DEFAULT_SPIN_BACKOFF_MAX = Duration.ofMillis(500);

    /** How long a fair lock's waiter may stay silent before it is taken for dead: 5 s. */
    public static final Duration DEFAULT_THREAD_WAIT_TIME = Duration.ofSeconds(5);

    /**
     * Whether {@link Relock#create} registers a JVM shutdown hook that releases what the client
     * holds and closes its leader elections: yes.
     */
    public static final boolean DEFAULT_RELEASE_ON_SHUTDOWN = true;

    /**
     * How long the shutdown hook of {@link Builder#releaseOnShutdown(boolean)} takes at most,
     * its releases and yields included, before the JVM may go on stopping: 2 s.
     */
    public static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    /** Whether {@link Relock#create} may return before Redis is reachable: no, it fails fast. */
    public static final boolean DEFAULT_CONNECT_IN_BACKGROUND = false;

    /** The smallest watchdog timeout accepted: below it renewals would flood Redis. */
    public static final Duration MIN_WATCHDOG_TIMEOUT = Duration.ofMillis(30);

    /** The smallest command timeout accepted: Redis cannot answer sooner than this. */
    public static final Duration MIN_COMMAND_TIMEOUT = Duration.ofMillis(1);

    /** The smallest thread wait time accepted: fair-lock waiters retry every third of it. */
    private static final Duration MIN_THREAD_WAIT_TIME = Duration.ofMillis(30);

    /** The smallest pause of a spin lock, and the shortest replica-sync timeout. */
    private static final Duration ONE_MILLISECOND = Duration.ofMillis(1);

    /** The longest duration of any setting: more is a mistake (a unit mixed up), not a need. */
    private static final Duration MAX_DURATION = Duration.ofDays(1);

    /** How the client reaches Redis. */
    public enum Topology {
        /** One Redis server (standalone, or a fixed master without failover). */
        SINGLE_SERVER,
        /** A master found through Redis Sentinel, followed across failovers. */
        SENTINEL,
        /** A Redis Cluster: each lock lives on the master that owns its hash slot. */
        CLUSTER,
        /** A fixed set of nodes, one master and its replicas; roles are read once at connect. */
        MASTER_REPLICA
    }

    private final Topology topology;
    private final List<String> serverUris;
    private final Duration watchdogTimeout;
    private final Duration commandTimeout;
    private final String keyPrefix;
    private final Duration spinBackoffInitial;
    private final Duration spinBackoffMax;
    private final Duration threadWaitTime;
    private final String masterName;
    private final String username;
    private final char[] password;
    private final Path trustedCertificates;
    private final TrustManagerFactory trustManagerFactory;
    private final KeyManagerFactory keyManagerFactory;
    private final int database;
    private final int replicaSyncMinReplicas;
    private final Duration replicaSyncTimeout;
    private final List<LockObserver> observers;
    private final boolean releaseOnShutdown;
    private final boolean connectInBackground;

    private RelockConfig(Builder builder, int database) {
        this.topology = builder.topology;
        this.serverUris = List.copyOf(builder.serverUris);
        this.masterName = builder.masterName;
        this.username = builder.username;
        this.password = builder.password == null ? null : builder.password.clone();
        this.trustedCertificates = builder.trustedCertificates;
        this.trustManagerFactory = builder.trustManagerFactory;
        this.keyManagerFactory = builder.keyManagerFactory;
        this.database = database;
        this.replicaSyncMinReplicas = builder.replicaSyncMinReplicas;
        this.replicaSyncTimeout = orDefault(builder.replicaSyncTimeout, Duration.ZERO);
        this.watchdogTimeout = orDefault(builder.watchdogTimeout, DEFAULT_WATCHDOG_TIMEOUT);
        this.commandTimeout = orDefault(builder.commandTimeout, DEFAULT_COMMAND_TIMEOUT);
        this.keyPrefix = orDefault(builder.keyPrefix, DEFAULT_KEY_PREFIX);
        this.spinBackoffInitial = orDefault(builder.spinBackoffInitial, DEFAULT_SPIN_BACKOFF_INITIAL);
        this.spinBackoffMax = orDefault(builder.spinBackoffMax, DEFAULT_SPIN_BACKOFF_MAX);
        this.threadWaitTime = orDefault(builder.threadWaitTime, DEFAULT_THREAD_WAIT_TIME);
        this.observers = List.copyOf(builder.observers);
        this.releaseOnShutdown = orDefault(builder.releaseOnShutdown, DEFAULT_RELEASE_ON_SHUTDOWN);
        this.connectInBackground = orDefault(builder.connectInBackground, DEFAULT_CONNECT_IN_BACKGROUND);
    }

    private static <T> T orDefault(T value, T defaultValue) {
        return value != null ? value : defaultValue;
    }

    /**
     * Starts a new builder with every setting at its default and no server.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The observers every client made from this configuration starts with, in the order they
     * were added.
     *
     * @return the observers; empty by default
     */
    public List<LockObserver> observers() {
        return observers;
    }

    /**
     * How the client reaches Redis.
     *
     * @return the topology
     */
    public Topology topology() {
        return topology;
    }

    /**
     * The server URIs as given ({@code redis://} or {@code rediss://}): the one server, the
     * sentinels, the cluster's seed nodes or the master/replica nodes, by {@link #topology()}.
     *
     * @return an unmodifiable list with at least one URI
     */
    public List<String> serverUris() {
        return serverUris;
    }

    /**
     * The name under which the sentinels monitor the master.
     *
     * @return the master name for {@link Topology#SENTINEL}, else null
     */
    public String masterName() {
        return masterName;
    }

    /**
     * The ACL user for data nodes whose URI names none.
     *
     * @return the user name, or null for the URIs' own (or the {@code default} user)
     */
    public String username() {
        return username;
    }

    /**
     * The password for data nodes whose URI carries none.
     *
     * @return a copy of the password, or null when none was set
     */
    public char[] password() {
        return password == null ? null : password.clone();
    }

    /**
     * The PEM file of certificate authorities trusted for {@code rediss://} connections.
     *
     * @return the file, or null to use the JVM's default trust store
     */
    public Path trustedCertificates() {
        return trustedCertificates;
    }

    /**
     * The trust managers for {@code rediss://} connections, e.g. from a Spring Boot SSL bundle.
     *
     * @return the factory, or null to use {@link #trustedCertificates()} or the JVM's default
     */
    public TrustManagerFactory trustManagerFactory() {
        return trustManagerFactory;
    }

    /**
     * The key managers that present a client certificate on {@code rediss://} connections.
     *
     * @return the factory, or null to present none
     */
    public KeyManagerFactory keyManagerFactory() {
        return keyManagerFactory;
    }

    /**
     * The Redis database the locks live in: the one set with {@link Builder#database(int)}, else
     * the one in the server URIs ({@code redis://host/2}) of a single server or master/replica
     * nodes, else 0. Always 0 in a cluster.
     *
     * @return the database number
     */
    public int database() {
        return database;
    }

    /**
     * How many replicas must acknowledge each acquire, renewal and release (Redis {@code WAIT}).
     *
     * @return the minimum number of replicas, 0 when replica sync is off
     */
    public int replicaSyncMinReplicas() {
        return replicaSyncMinReplicas;
    }

    /**
     * How long an acquire or renewal waits for the replicas' acknowledgements.
     *
     * @return the timeout, {@link Duration#ZERO} when replica sync is off
     */
    public Duration replicaSyncTimeout() {
        return replicaSyncTimeout;
    }

    /**
     * The lease of locks taken without one; the watchdog renews them every third of it.
     *
     * @return the watchdog timeout
     */
    public Duration watchdogTimeout() {
        return watchdogTimeout;
    }

    /**
     * How long one Redis command may take; also how long a call that does not wait (an
     * {@code unlock}, a {@code tryLock()} without wait) keeps retrying through a broken
     * connection or a failover. Waiting calls retry until their wait is over.
     *
     * @return the command timeout
     */
    public Duration commandTimeout() {
        return commandTimeout;
    }

    /**
     * The prefix of every lock key.
     *
     * @return the prefix, empty for none
     */
    public String keyPrefix() {
        return keyPrefix;
    }

    /**
     * The first pause of a spin lock ({@link Relock#getSpinLock}) between attempts; it doubles
     * after each failed attempt up to {@link #spinBackoffMax()}, with jitter.
     *
     * @return the initial backoff
     */
    public Duration spinBackoffInitial() {
        return spinBackoffInitial;
    }

    /**
     * The longest pause of a spin lock between attempts.
     *
     * @return the maximum backoff
     */
    public Duration spinBackoffMax() {
        return spinBackoffMax;
    }

    /**
     * How long a waiter of a fair lock ({@link Relock#getFairLock}) may go without retrying
     * before it is taken for dead and skipped. Waiters retry every third of it while waiting,
     * so a live waiter keeps its place; a crashed one delays the queue by at most this.
     *
     * @return the thread wait time
     */
    public Duration threadWaitTime() {
        return threadWaitTime;
    }

    /**
     * Whether the client releases what it holds when the JVM stops without {@link Relock#close()}
     * (see {@link Builder#releaseOnShutdown(boolean)}).
     *
     * @return true to register the shutdown hook; {@link #DEFAULT_RELEASE_ON_SHUTDOWN} by default
     */
    public boolean releaseOnShutdown() {
        return releaseOnShutdown;
    }

    /**
     * Whether {@link Relock#create} returns without Redis and connects in the background (see
     * {@link Builder#connectInBackground(boolean)}).
     *
     * @return true to connect in the background; {@link #DEFAULT_CONNECT_IN_BACKGROUND} by default
     */
    public boolean connectInBackground() {
        return connectInBackground;
    }

    @Override
    public String toString() {
        return "RelockConfig{topology=" + topology
                + ", servers=" + serverUris.stream().map(RedisUris::redact).toList()
                + ", watchdogTimeout=" + watchdogTimeout
                + ", commandTimeout=" + commandTimeout
                + (database != 0 ? ", database=" + database : "")
                + (masterName != null ? ", masterName=" + masterName : "")
                + (username != null ? ", username=" + username : "")
                + (password != null ? ", password=***" : "")
                + (replicaSyncMinReplicas > 0
                        ? ", replicaSync=" + replicaSyncMinReplicas + "/" + replicaSyncTimeout : "")
                + (releaseOnShutdown ? "" : ", releaseOnShutdown=false")
                + (connectInBackground ? ", connectInBackground=true" : "")
                + ", keyPrefix='" + keyPrefix + "'}";
    }

    /**
     * Collects settings for a {@link RelockConfig}. Not thread-safe. Each setter may be called
     * once; a second call throws {@link IllegalStateException}.
     */
    public static final class Builder {

        private Topology topology;
        private List<String> serverUris = List.of();
        private Duration watchdogTimeout;
        private Duration commandTimeout;
        private String keyPrefix;
        private Duration spinBackoffInitial;
        private Duration spinBackoffMax;
        private Duration threadWaitTime;
        private String masterName;
        private String username;
        private char[] password;
        private boolean credentialsSet;
        private Path trustedCertificates;
        private TrustManagerFactory trustManagerFactory;
        private KeyManagerFactory keyManagerFactory;
        private Integer database;
        private int replicaSyncMinReplicas;
        private Duration replicaSyncTimeout;
        private final List<LockObserver> observers = new java.util.ArrayList<>();
        private Boolean releaseOnShutdown;
        private Boolean connectInBackground;

        private Builder() {}

        private void setTopology(Topology chosen, String setting, String[] uris) {
            Args.notNull(uris, "uris");
            if (topology != null) {
                throw new IllegalStateException("a server is already configured (" + topology
                        + "); " + setting + " cannot be added to it");
            }
            Args.require(uris.length > 0, "%s: at least one URI is required", setting);
            for (int i = 0; i < uris.length; i++) {
                Args.notNull(uris[i], setting + " uri #" + i);
            }
            topology = chosen;
            serverUris = List.of(uris);
        }

        /**
         * Use one Redis server. The URI may carry a user and password
         * ({@code redis://user:secret@host:6379}), a database ({@code /2}) and TLS
         * ({@code rediss://}).
         *
         * @param uri the server's URI
         * @return this builder
         * @throws NullPointerException if {@code uri} is null
         * @throws IllegalStateException if a server was already set
         */
        public Builder singleServer(String uri) {
            Args.notNull(uri, "uri");
            setTopology(Topology.SINGLE_SERVER, "singleServer", new String[] {uri});
            return this;
        }

        /**
         * Use the master that Redis Sentinel monitors as {@code masterName}, and follow it
         * across failovers. The URIs are the sentinels' ({@code redis://[user:pw@]host:26379});
         * credentials in them are the sentinels' own. The master and replicas use
         * {@link #credentials}; they use TLS when the sentinel URIs are {@code rediss://}.
         *
         * @param masterName the monitored master's name
         * @param sentinelUris one or more sentinels
         * @return this builder
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if no sentinel or an empty master name is given
         * @throws IllegalStateException if a server was already set
         */
        public Builder sentinel(String masterName, String... sentinelUris) {
            Args.notNull(masterName, "masterName");
            Args.require(!masterName.isBlank(), "masterName must not be blank");
            setTopology(Topology.SENTINEL, "sentinel", sentinelUris);
            this.masterName = masterName;
            return this;
        }

        /**
         * Use a Redis Cluster. The URIs are seed nodes (any reachable one is enough); the rest of
         * the cluster is discovered and followed across failovers and resharding. Credentials
         * and TLS come from the URIs, or {@link #credentials} for all nodes.
         *
         * @param seedUris one or more nodes of the cluster
         * @return this builder
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if no URI is given
         * @throws IllegalStateException if a server was already set
         */
        public Builder cluster(String... seedUris) {
            setTopology(Topology.CLUSTER, "cluster", seedUris);
            return this;
        }

        /**
         * Use a fixed master and its replicas, without Sentinel. Every lock command goes to the
         * master; which node that is, is read from the nodes once, at {@link Relock#create}. A
         * replica promoted later by hand is not followed: create a new client.
         *
         * @param uris every node, master and replicas, in any order
         * @return this builder
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if no URI is given
         * @throws IllegalStateException if a server was already set
         */
        public Builder masterReplica(String... uris) {
            setTopology(Topology.MASTER_REPLICA, "masterReplica", uris);
            return this;
        }

        /**
         * The ACL user and password of the Redis data nodes, for URIs that carry none (a
         * sentinel's master and replicas always use these). Never logged.
         *
         * @param username the ACL user, or null for the {@code default} user
         * @param password the password
         * @return this builder
         * @throws NullPointerException if {@code password} is null
         * @throws IllegalArgumentException if {@code username} is empty
         * @throws IllegalStateException if already set
         */
        public Builder credentials(String username, char[] password) {
            Args.notNull(password, "password");
            Args.require(username == null || !username.isEmpty(),
                    "credentials: username must not be empty (null for the default user)");
            if (credentialsSet) {
                throw new IllegalStateException("credentials can only be set once");
            }
            credentialsSet = true;
            this.username = username;
            this.password = password.clone();
            return this;
        }

        /**
         * As {@link #credentials(String, char[])}, with the password as a string (as it comes
         * from configuration files and secret stores). Never logged.
         *
         * @param username the ACL user, or null for the {@code default} user
         * @param password the password
         * @return this builder
         * @throws NullPointerException if {@code password} is null
         * @throws IllegalArgumentException if {@code username} is empty
         * @throws IllegalStateException if already set
         */
        public Builder credentials(String username, String password) {
            Args.notNull(password, "password");
            return credentials(username, password.toCharArray());
        }

        /**
         * Trust the certificate authorities in this PEM file for {@code rediss://}
         * connections, instead of the JVM's default trust store (e.g. for a private CA).
         *
         * @param pemFile the CA certificates
         * @return this builder
         * @throws NullPointerException if {@code pemFile} is null
         * @throws IllegalArgumentException at {@link #build} if the file is not readable
         * @throws IllegalStateException if already set; at {@link #build} if a
         *     {@link #trustManagerFactory} is set too
         */
        public Builder trustedCertificates(Path pemFile) {
            Args.notNull(pemFile, "trustedCertificates");
            Args.setOnce(trustedCertificates, "trustedCertificates");
            trustedCertificates = pemFile;
            return this;
        }

        /**
         * Trust whom this factory's trust managers trust for {@code rediss://} connections,
         * instead of the JVM's default trust store: for trust material that is not a PEM file,
         * such as a key store or a Spring Boot SSL bundle
         * ({@code bundle.getManagers().getTrustManagerFactory()}). The factory must be
         * initialised; it is used for every connection the client opens.
         *
         * @param factory an initialised trust manager factory
         * @return this builder
         * @throws NullPointerException if {@code factory} is null
         * @throws IllegalArgumentException at {@link #build} if it is not initialised
         * @throws IllegalStateException if already set; at {@link #build} if
         *     {@link #trustedCertificates} is set too
         */
        public Builder trustManagerFactory(TrustManagerFactory factory) {
            Args.notNull(factory, "trustManagerFactory");
            Args.setOnce(trustManagerFactory, "trustManagerFactory");
            trustManagerFactory = factory;
            return this;
        }

        /**
         * Present the client certificate of this factory's key managers on {@code rediss://}
         * connections, for servers that require one ({@code tls-auth-clients yes}). Combines
         * with {@link #trustedCertificates} or {@link #trustManagerFactory}.
         *
         * @param factory an initialised key manager factory
         * @return this builder
         * @throws NullPointerException if {@code factory} is null
         * @throws IllegalArgumentException at {@link #build} if it is not initialised
         * @throws IllegalStateException if already set
         */
        public Builder keyManagerFactory(KeyManagerFactory factory) {
            Args.notNull(factory, "keyManagerFactory");
            Args.setOnce(keyManagerFactory, "keyManagerFactory");
            keyManagerFactory = factory;
            return this;
        }

        /**
         * The Redis database (as {@code SELECT}) that holds the locks of a single server, a
         * Sentinel-monitored master or master/replica nodes. The same as a {@code /db} path in
         * the server URI, which may be given instead. Clients that must exclude each other,
         * Redisson ones included, must use the same database. A database the server does not
         * have makes {@link Relock#create} fail.
         *
         * @param database 0 or more
         * @return this builder
         * @throws IllegalArgumentException at {@link #build} if negative, if not 0 with
         *     {@link #cluster} (a cluster has database 0 only), or if a server URI names another
         *     database
         * @throws IllegalStateException if already set
         */
        public Builder database(int database) {
            Args.setOnce(this.database, "database");
            this.database = database;
            return this;
        }

        /**
         * Make every acquire, watchdog renewal and release wait (Redis {@code WAIT}) until at
         * least {@code minReplicas} replicas of the lock's master acknowledged it, at most
         * {@code timeout}. An acquire with fewer acknowledgements is undone and fails with a
         * {@link RelockException} saying how many replicas answered; a renewal with fewer
         * counts as a failed renewal (the hold is reported lost if none succeeds before its
         * lease ends); a release with fewer is logged and stands (it took effect on the master).
         * When the connection changed between the write and {@code WAIT}, the write is run again
         * on the server that answers now, within the call's budget. Off by default. This narrows the window in which a failover loses a
         * lock; it does not close it (see docs/topologies-and-guarantees.md#guarantees).
         *
         * @param minReplicas at least 1
         * @param timeout at least 1 ms, at most one day
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException at {@link #build} if a value is out of range
         * @throws IllegalStateException if already set
         */
        public Builder replicaSync(int minReplicas, Duration timeout) {
            Args.notNull(timeout, "replicaSync timeout");
            Args.setOnce(replicaSyncTimeout, "replicaSync");
            replicaSyncMinReplicas = minReplicas;
            replicaSyncTimeout = timeout;
            return this;
        }

        /**
         * The lease of locks taken without one, renewed every third of it while held. Default
         * {@link #DEFAULT_WATCHDOG_TIMEOUT}; at least {@link #MIN_WATCHDOG_TIMEOUT}, at most one
         * day.
         *
         * <p>It is also how long such a lock stays held after its process died without releasing
         * it (SIGKILL, a crash, a lost network): nothing can release it then, and the lease must
         * run out. For a leader election, where a dead leader's lease is time without a leader,
         * choose a short one, e.g. 5 s to 10 s (renewals every 2 s to 3 s): the longest pause a
         * leader may take (a GC pause, a stalled VM) must stay well below it.
         *
         * @param timeout the watchdog timeout
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder watchdogTimeout(Duration timeout) {
            Args.notNull(timeout, "watchdogTimeout");
            Args.setOnce(watchdogTimeout, "watchdogTimeout");
            watchdogTimeout = timeout;
            return this;
        }

        /**
         * How long one Redis command may take before it fails, and how long a call that does not
         * wait keeps retrying through a broken connection or a failover (a waiting call retries
         * until its wait is over). Default {@link #DEFAULT_COMMAND_TIMEOUT}; at least
         * {@link #MIN_COMMAND_TIMEOUT}, at most one day.
         * Connecting (in {@link Relock#create}) may take the longer of this and 10 s.
         *
         * @param timeout the command timeout
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder commandTimeout(Duration timeout) {
            Args.notNull(timeout, "commandTimeout");
            Args.setOnce(commandTimeout, "commandTimeout");
            commandTimeout = timeout;
            return this;
        }

        /**
         * A prefix put before every lock name to form its key, e.g. {@code "billing:"}. Clients
         * that must exclude each other, Redisson ones included, must use the same prefix.
         *
         * @param prefix the prefix; empty for none
         * @return this builder
         * @throws NullPointerException if {@code prefix} is null
         * @throws IllegalStateException if already set
         */
        public Builder keyPrefix(String prefix) {
            Args.notNull(prefix, "keyPrefix");
            Args.wellFormed(prefix, "keyPrefix");
            Args.setOnce(keyPrefix, "keyPrefix");
            keyPrefix = prefix;
            return this;
        }

        /**
         * How spin locks back off between attempts: {@code initial} after the first failed
         * attempt, doubling up to {@code max}, each pause randomised between half and all of
         * it. Defaults {@link #DEFAULT_SPIN_BACKOFF_INITIAL} and {@link #DEFAULT_SPIN_BACKOFF_MAX};
         * both at least 1 ms and at most one day, {@code initial} at most {@code max}.
         *
         * @param initial the first pause
         * @param max the longest pause
         * @return this builder
         * @throws NullPointerException if either is null
         * @throws IllegalStateException if already set
         */
        public Builder spinBackoff(Duration initial, Duration max) {
            Args.notNull(initial, "initial");
            Args.notNull(max, "max");
            Args.setOnce(spinBackoffInitial, "spinBackoff");
            spinBackoffInitial = initial;
            spinBackoffMax = max;
            return this;
        }

        /**
         * How long a fair lock's waiter may stay silent before it is taken for dead. Default
         * {@link #DEFAULT_THREAD_WAIT_TIME}; at least 30 ms, at most one day.
         *
         * @param timeout the thread wait time
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder threadWaitTime(Duration timeout) {
            Args.notNull(timeout, "threadWaitTime");
            Args.setOnce(threadWaitTime, "threadWaitTime");
            threadWaitTime = timeout;
            return this;
        }

        /**
         * Whether each client made from this configuration registers a JVM shutdown hook (on by
         * default, {@link #DEFAULT_RELEASE_ON_SHUTDOWN}). When the JVM stops without
         * {@link Relock#close()} (SIGTERM, {@code System.exit}, the end of {@code main}), the hook
         * ends the client's waits, closes its leader elections (each yields its leadership), and
         * releases every hold of every owner of the client, owner-checked and each once, as
         * {@code unlock()} would; then it closes the client. It takes at most
         * {@link #SHUTDOWN_TIMEOUT} (2 s), also when Redis is unreachable: what is not released
         * by then stays held until its lease runs out. It logs what it did (INFO, or WARN when
         * something could not be released) and never throws. {@link Relock#close()} removes the
         * hook, so creating and closing clients leaves no hooks behind.
         *
         * <p>After SIGKILL (or a crash, or a power loss) no code runs: the locks stay held until
         * their leases run out, at most {@link RelockConfig#watchdogTimeout()} for locks taken
         * without a lease. Set {@code false} when the application releases its locks itself before it
         * stops, or when locks must outlive the process.
         *
         * @param release false to register no hook
         * @return this builder
         * @throws IllegalStateException if already set
         */
        public Builder releaseOnShutdown(boolean release) {
            Args.setOnce(releaseOnShutdown, "releaseOnShutdown");
            releaseOnShutdown = release;
            return this;
        }

        /**
         * Whether {@link Relock#create} may return while Redis is unreachable (off by default,
         * {@link #DEFAULT_CONNECT_IN_BACKGROUND}: {@code create} then fails fast with
         * {@link RelockConnectionException}). When on and Redis cannot be reached, {@code create}
         * logs a warning and returns a client that keeps trying to connect in the background
         * (every 100 ms at first, backing off to every second) until it is connected or closed.
         * Until then {@link Relock#isConnected()} is false and every call that needs Redis fails
         * with {@link RelockConnectionException}: at once when it does not wait ({@code tryLock()},
         * {@code unlock}, {@link Relock#getLockInfo}), at the end of its wait when it waits
         * ({@code tryLock(waitTime, ...)}); {@code lock()} waits until Redis is up, as it rides
         * through any reconnect (see {@link DistributedLock}). Leader elections started meanwhile
         * run for leadership once connected. Errors that are not about reaching Redis (wrong
         * credentials, a server that is not Redis) are also only logged, and retried. Not with
         * {@link #cluster}: a cluster client must see its nodes to know how to subscribe.
         *
         * @param background true to start without Redis
         * @return this builder
         * @throws IllegalStateException if already set
         * @throws IllegalArgumentException at {@link #build} if true with {@link #cluster}
         */
        public Builder connectInBackground(boolean background) {
            Args.setOnce(connectInBackground, "connectInBackground");
            connectInBackground = background;
            return this;
        }

        /**
         * Adds an observer that every client made from this configuration reports its lock
         * events to (see {@link LockObserver}); unlike the other settings it may be called
         * several times, once per observer.
         *
         * @param observer the observer
         * @return this builder
         * @throws NullPointerException if {@code observer} is null
         * @throws IllegalArgumentException if this observer was added already
         */
        public Builder observer(LockObserver observer) {
            Args.notNull(observer, "observer");
            Args.require(!observers.contains(observer), "observer %s was added already", observer);
            observers.add(observer);
            return this;
        }

        /**
         * Validates the settings and builds the configuration.
         *
         * @return the configuration
         * @throws IllegalStateException if no server was configured
         * @throws IllegalArgumentException if a setting is invalid; the message names it
         */
        public RelockConfig build() {
            if (topology == null) {
                throw new IllegalStateException(
                        "no server configured: call singleServer, sentinel, cluster or masterReplica");
            }
            String setting = switch (topology) {
                case SINGLE_SERVER -> "singleServer";
                case SENTINEL -> "sentinel";
                case CLUSTER -> "cluster";
                case MASTER_REPLICA -> "masterReplica";
            };
            Integer uriDatabase = null;
            for (String uri : serverUris) {
                Integer named = RedisUris.parse(uri, setting).database();
                if (named == null) {
                    continue;
                }
                if (database != null && !database.equals(named)) {
                    throw new IllegalArgumentException("database " + database + " conflicts with database " + named
                            + " in " + setting + " URI '" + RedisUris.redact(uri) + "'");
                }
                if (uriDatabase != null && !uriDatabase.equals(named)) {
                    throw new IllegalArgumentException(setting + " URIs name different databases: " + uriDatabase
                            + " and " + named + " ('" + RedisUris.redact(uri) + "')");
                }
                uriDatabase = named;
            }
            if (database != null) {
                Args.require(database >= 0, "database must not be negative: %s", database);
                Args.require(database == 0 || topology != Topology.CLUSTER,
                        "database must be 0 with cluster (a Redis Cluster has database 0 only): %s", database);
            }
            if (trustedCertificates != null) {
                Args.require(Files.isReadable(trustedCertificates),
                        "trustedCertificates: cannot read %s", trustedCertificates);
                if (trustManagerFactory != null) {
                    throw new IllegalStateException("trustedCertificates and trustManagerFactory are both set: "
                            + "give the trusted certificates one way");
                }
            }
            if (trustManagerFactory != null) {
                requireInitialised(trustManagerFactory::getTrustManagers, "trustManagerFactory");
            }
            if (keyManagerFactory != null) {
                requireInitialised(keyManagerFactory::getKeyManagers, "keyManagerFactory");
            }
            if (replicaSyncTimeout != null) {
                Args.require(replicaSyncMinReplicas >= 1,
                        "replicaSync minReplicas must be at least 1: %s", replicaSyncMinReplicas);
                Args.between(replicaSyncTimeout, ONE_MILLISECOND, MAX_DURATION, "replicaSync timeout");
            }
            // A sentinel's URI is the sentinel's own: its path never chose the master's database.
            int selected = 0;
            if (database != null) {
                selected = database;
            } else if (uriDatabase != null && topology != Topology.SENTINEL) {
                selected = uriDatabase;
            }
            Args.require(!Boolean.TRUE.equals(connectInBackground) || topology != Topology.CLUSTER,
                    "connectInBackground is not supported with cluster (a cluster client must reach its nodes to "
                            + "know how to subscribe): %s", serverUris);
            RelockConfig config = new RelockConfig(this, selected);
            Args.between(config.watchdogTimeout, MIN_WATCHDOG_TIMEOUT, MAX_DURATION, "watchdogTimeout");
            Args.between(config.commandTimeout, MIN_COMMAND_TIMEOUT, MAX_DURATION, "commandTimeout");
            Args.between(config.threadWaitTime, MIN_THREAD_WAIT_TIME, MAX_DURATION, "threadWaitTime");
            Args.between(config.spinBackoffInitial, ONE_MILLISECOND, MAX_DURATION, "spinBackoff initial");
            Args.between(config.spinBackoffMax, ONE_MILLISECOND, MAX_DURATION, "spinBackoff max");
            Args.require(config.spinBackoffInitial.compareTo(config.spinBackoffMax) <= 0,
                    "spinBackoff initial must not exceed max: %s > %s", config.spinBackoffInitial, config.spinBackoffMax);
            return config;
        }

        /** A JSSE factory hands out its managers only once {@code init} was called. */
        private static void requireInitialised(Supplier<Object[]> managers, String setting) {
            try {
                managers.get();
            } catch (IllegalStateException e) {
                throw new IllegalArgumentException(setting + " is not initialised: call its init method first", e);
            }
        }
    }
}
