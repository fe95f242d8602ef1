package io.relock.spring.boot;

import io.relock.LockLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import io.relock.spring.LeaderOnly;
import io.relock.spring.RelockLeadership;
import io.relock.spring.RelockTemplate;
import io.relock.spring.WithLock;

/**
 * Relock's own settings, under {@code relock.*}. Where to connect comes from Spring Boot's
 * {@code spring.data.redis.*} settings (or a {@code @ServiceConnection}); a setting left unset
 * keeps {@code io.relock.RelockConfig}'s default.
 */
@ConfigurationProperties(prefix = "relock")
public class RelockProperties {

    /** The name of the property that lets the application start while Redis is unreachable. */
    static final String REQUIRE_REDIS_AT_STARTUP = "relock.require-redis-at-startup";

    /** Whether to create the Relock client and the @WithLock advice. */
    private boolean enabled = true;

    /** Prefix of every lock key on Redis, e.g. "app1:". Default: none. */
    private String keyPrefix;

    /** Lease of locks taken without one, renewed every third of it while held. Default: 30s. */
    private Duration watchdogTimeout;

    /**
     * Time limit of one Redis call, and the retry budget of calls that do not wait. Default:
     * spring.data.redis.timeout, else 3s.
     */
    private Duration commandTimeout;

    /** How long a fair lock's queue keeps a waiter that stopped asking. Default: 5s. */
    private Duration threadWaitTime;

    /** What a @WithLock caller gets when its lock was lost while the method ran. */
    private OnLockLost onLockLost = OnLockLost.THROW;

    /**
     * How long @WithLock methods and RelockTemplate calls that give no wait time wait for the
     * lock; 0 (or negative) for one attempt. Default: until acquired.
     */
    private Duration defaultWaitTime;

    /**
     * Whether the application's start fails when Redis cannot be reached. false: start anyway,
     * connect in the background, report health DOWN, and fail lock calls with
     * RelockConnectionException until Redis is reachable. Not with a Redis Cluster.
     */
    private boolean requireRedisAtStartup = true;

    /**
     * Where the locks live: redis (the default, from spring.data.redis.*), jdbc (the
     * application's DataSource, with relock-jdbc on the class path) or zookeeper (relock.zookeeper.*,
     * with relock-zookeeper on the class path).
     */
    private Store store = Store.REDIS;

    private final Jdbc jdbc = new Jdbc();

    private final ZooKeeper zookeeper = new ZooKeeper();

    private final ReplicaSync replicaSync = new ReplicaSync();

    private final SpinBackoff spinBackoff = new SpinBackoff();

    private final Metrics metrics = new Metrics();

    private final LeaderElection leaderElection = new LeaderElection();

    /**
     * Whether to create the client and the advice.
     *
     * @return {@code relock.enabled}
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets {@code relock.enabled}.
     *
     * @param enabled whether to create the client and the advice
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Whether the start fails when Redis cannot be reached (the default), or the application
     * starts without it and Relock connects in the background.
     *
     * @return {@code relock.require-redis-at-startup}
     */
    public boolean isRequireRedisAtStartup() {
        return requireRedisAtStartup;
    }

    /**
     * Sets {@code relock.require-redis-at-startup}.
     *
     * @param requireRedisAtStartup false to start while Redis is unreachable: health DOWN and
     *     lock calls failing with {@code RelockConnectionException} until it is reachable
     *     (relock-core's {@code RelockConfig.Builder.connectInBackground(true)}); with a Redis
     *     Cluster, false fails the start naming the property
     */
    public void setRequireRedisAtStartup(boolean requireRedisAtStartup) {
        this.requireRedisAtStartup = requireRedisAtStartup;
    }

    /**
     * The key prefix.
     *
     * @return {@code relock.key-prefix}, or null when unset
     */
    public String getKeyPrefix() {
        return keyPrefix;
    }

    /**
     * Sets {@code relock.key-prefix}.
     *
     * @param keyPrefix the prefix
     */
    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    /**
     * The watchdog timeout.
     *
     * @return {@code relock.watchdog-timeout}, or null when unset
     */
    public Duration getWatchdogTimeout() {
        return watchdogTimeout;
    }

    /**
     * Sets {@code relock.watchdog-timeout}.
     *
     * @param watchdogTimeout the timeout
     */
    public void setWatchdogTimeout(Duration watchdogTimeout) {
        this.watchdogTimeout = watchdogTimeout;
    }

    /**
     * The command timeout.
     *
     * @return {@code relock.command-timeout}, or null when unset
     */
    public Duration getCommandTimeout() {
        return commandTimeout;
    }

    /**
     * Sets {@code relock.command-timeout}.
     *
     * @param commandTimeout the timeout
     */
    public void setCommandTimeout(Duration commandTimeout) {
        this.commandTimeout = commandTimeout;
    }

    /**
     * The fair lock's waiter timeout.
     *
     * @return {@code relock.thread-wait-time}, or null when unset
     */
    public Duration getThreadWaitTime() {
        return threadWaitTime;
    }

    /**
     * Sets {@code relock.thread-wait-time}.
     *
     * @param threadWaitTime the timeout
     */
    public void setThreadWaitTime(Duration threadWaitTime) {
        this.threadWaitTime = threadWaitTime;
    }

    /**
     * What a caller gets when its lock was lost.
     *
     * @return {@code relock.on-lock-lost}
     */
    public OnLockLost getOnLockLost() {
        return onLockLost;
    }

    /**
     * Sets {@code relock.on-lock-lost}.
     *
     * @param onLockLost the behaviour
     */
    public void setOnLockLost(OnLockLost onLockLost) {
        this.onLockLost = onLockLost;
    }

    /**
     * The wait time of calls that give none.
     *
     * @return {@code relock.default-wait-time}, or null when unset (wait until acquired)
     */
    public Duration getDefaultWaitTime() {
        return defaultWaitTime;
    }

    /**
     * Sets {@code relock.default-wait-time}.
     *
     * @param defaultWaitTime the wait time; zero or negative for one attempt (as core's
     *     {@code tryLock} takes it); null to wait until acquired
     */
    public void setDefaultWaitTime(Duration defaultWaitTime) {
        this.defaultWaitTime = defaultWaitTime;
    }

    /**
     * The replica-sync settings.
     *
     * @return {@code relock.replica-sync.*}
     */
    public ReplicaSync getReplicaSync() {
        return replicaSync;
    }

    /**
     * The spin lock's backoff settings.
     *
     * @return {@code relock.spin-backoff.*}
     */
    public SpinBackoff getSpinBackoff() {
        return spinBackoff;
    }

    /**
     * The meters of relock-micrometer, when it and a meter registry are present.
     *
     * @return {@code relock.metrics.*}
     */
    public Metrics getMetrics() {
        return metrics;
    }

    /**
     * Where the locks live.
     *
     * @return {@code relock.store}
     */
    public Store getStore() {
        return store;
    }

    /**
     * Sets {@code relock.store}.
     *
     * @param store redis, jdbc or zookeeper
     */
    public void setStore(Store store) {
        this.store = store;
    }

    /**
     * The lock table, with {@code relock.store=jdbc}.
     *
     * @return {@code relock.jdbc.*}
     */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /**
     * The ensemble and the lock nodes' path, with {@code relock.store=zookeeper}.
     *
     * @return {@code relock.zookeeper.*}
     */
    public ZooKeeper getZookeeper() {
        return zookeeper;
    }

    /**
     * The leader elections this application runs for ({@link LeaderOnly}, {@link RelockLeadership}).
     *
     * @return {@code relock.leader-election.*}
     */
    public LeaderElection getLeaderElection() {
        return leaderElection;
    }

    /** The leader elections this application runs for, besides those of its {@link LeaderOnly} methods. */
    public static class LeaderElection {

        /** Whether to run for leadership; false: never lead, and skip every @LeaderOnly call. */
        private boolean enabled = true;

        /** Elections to run for besides those named by @LeaderOnly methods, e.g. to act on their events. */
        private List<String> names = new ArrayList<>();

        /**
         * Whether this application runs for leadership.
         *
         * @return {@code relock.leader-election.enabled}
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code relock.leader-election.enabled}.
         *
         * @param enabled false to run for no election
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The elections named in the properties.
         *
         * @return {@code relock.leader-election.names}
         */
        public List<String> getNames() {
            return names;
        }

        /**
         * Sets {@code relock.leader-election.names}.
         *
         * @param names the elections' names
         */
        public void setNames(List<String> names) {
            this.names = names;
        }
    }

    /** The meters relock-micrometer binds, and the span around each acquire. */
    public static class Metrics {

        /** Whether to bind Relock's meters (and observe acquires) when relock-micrometer is present. */
        private boolean enabled = true;

        /** Distinct lock names tagged on meters; later names count under "_other". Default: 100. */
        private int maxLockNames = 100;

        /**
         * Whether the meters are bound.
         *
         * @return {@code relock.metrics.enabled}
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code relock.metrics.enabled}.
         *
         * @param enabled false to bind no meters
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The cap on lock names in tags.
         *
         * @return {@code relock.metrics.max-lock-names}
         */
        public int getMaxLockNames() {
            return maxLockNames;
        }

        /**
         * Sets {@code relock.metrics.max-lock-names}.
         *
         * @param maxLockNames at least 1
         */
        public void setMaxLockNames(int maxLockNames) {
            this.maxLockNames = maxLockNames;
        }
    }

    /** What a {@link WithLock} caller gets when its lock was lost while the method ran. */
    public enum OnLockLost {
        /**
         * A {@link LockLostException}: a transaction begun inside the call and about to commit
         * rolls back with it, otherwise it comes after the method returned.
         */
        THROW,
        /** A warning in the log; the caller gets the method's result, and its transaction commits. */
        LOG
    }

    /** Where the locks live. */
    public enum Store {
        /** On Redis, from Spring Boot's {@code spring.data.redis.*} connection. */
        REDIS,
        /** In the application's database, through its DataSource (relock-jdbc). */
        JDBC,
        /** On a ZooKeeper ensemble, as ephemeral sequential nodes (relock-zookeeper). */
        ZOOKEEPER
    }

    /** The ensemble of {@code relock.store=zookeeper}. */
    public static class ZooKeeper {

        /**
         * The ensemble, e.g. zk1:2181,zk2:2181,zk3:2181: Relock starts and closes a Curator client
         * of its own. Unset: the application's CuratorFramework bean, which Relock leaves open.
         */
        private String connectString;

        /** The path under which the lock nodes are; clients that should exclude each other use the same. */
        private String root = "/relock/locks";

        /**
         * The session timeout asked of ZooKeeper: how long a crashed or cut-off client keeps its
         * locks. Only with connect-string (the application's Curator has its own). Default: 10s.
         */
        private Duration sessionTimeout;

        /** How many ZooKeeper calls the client runs at once for async callers and woken waiters. Default: 8. */
        private int operationThreads = 8;

        /**
         * The ensemble.
         *
         * @return {@code relock.zookeeper.connect-string}, or null for the application's Curator
         */
        public String getConnectString() {
            return connectString;
        }

        /**
         * Sets {@code relock.zookeeper.connect-string}.
         *
         * @param connectString host:port pairs, comma-separated
         */
        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        /**
         * The lock nodes' path.
         *
         * @return {@code relock.zookeeper.root}
         */
        public String getRoot() {
            return root;
        }

        /**
         * Sets {@code relock.zookeeper.root}.
         *
         * @param root an absolute path, like /myapp/locks
         */
        public void setRoot(String root) {
            this.root = root;
        }

        /**
         * The session timeout.
         *
         * @return {@code relock.zookeeper.session-timeout}, or null for the default
         */
        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        /**
         * Sets {@code relock.zookeeper.session-timeout}.
         *
         * @param sessionTimeout at least one second
         */
        public void setSessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = sessionTimeout;
        }

        /**
         * The client's operation threads.
         *
         * @return {@code relock.zookeeper.operation-threads}
         */
        public int getOperationThreads() {
            return operationThreads;
        }

        /**
         * Sets {@code relock.zookeeper.operation-threads}.
         *
         * @param operationThreads 1 to 256
         */
        public void setOperationThreads(int operationThreads) {
            this.operationThreads = operationThreads;
        }
    }

    /** The lock table of {@code relock.store=jdbc}. */
    public static class Jdbc {

        /** The table's name, optionally with its schema. Default: relock_lock. */
        private String table = "relock_lock";

        /** Whether to create the table at start if it is missing. Default: false (create it with a migration). */
        private boolean createTable;

        /**
         * The table's name.
         *
         * @return {@code relock.jdbc.table}
         */
        public String getTable() {
            return table;
        }

        /**
         * Sets {@code relock.jdbc.table}.
         *
         * @param table the name
         */
        public void setTable(String table) {
            this.table = table;
        }

        /**
         * Whether to create the table at start.
         *
         * @return {@code relock.jdbc.create-table}
         */
        public boolean isCreateTable() {
            return createTable;
        }

        /**
         * Sets {@code relock.jdbc.create-table}.
         *
         * @param createTable whether to create it
         */
        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }
    }

    /** Waiting for replicas to acknowledge each acquire, renewal and release (Redis WAIT); off by default. */
    public static class ReplicaSync {

        /** How many replicas must acknowledge; 0 (the default) turns replica sync off. */
        private int minReplicas;

        /** How long to wait for the acknowledgements. Default: 1s. */
        private Duration timeout = Duration.ofSeconds(1);

        /**
         * The replicas required.
         *
         * @return {@code relock.replica-sync.min-replicas}
         */
        public int getMinReplicas() {
            return minReplicas;
        }

        /**
         * Sets {@code relock.replica-sync.min-replicas}.
         *
         * @param minReplicas the replicas required, 0 for off
         */
        public void setMinReplicas(int minReplicas) {
            this.minReplicas = minReplicas;
        }

        /**
         * The acknowledgement timeout.
         *
         * @return {@code relock.replica-sync.timeout}
         */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets {@code relock.replica-sync.timeout}.
         *
         * @param timeout the timeout
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** How spin locks back off between attempts. */
    public static class SpinBackoff {

        /** First pause between attempts. Default: 5ms. */
        private Duration initial;

        /** Longest pause between attempts. Default: 500ms. */
        private Duration max;

        /**
         * The first pause.
         *
         * @return {@code relock.spin-backoff.initial}, or null when unset
         */
        public Duration getInitial() {
            return initial;
        }

        /**
         * Sets {@code relock.spin-backoff.initial}.
         *
         * @param initial the first pause
         */
        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        /**
         * The longest pause.
         *
         * @return {@code relock.spin-backoff.max}, or null when unset
         */
        public Duration getMax() {
            return max;
        }

        /**
         * Sets {@code relock.spin-backoff.max}.
         *
         * @param max the longest pause
         */
        public void setMax(Duration max) {
            this.max = max;
        }
    }
}
