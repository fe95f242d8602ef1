package io.relock.internal;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import io.lettuce.core.masterreplica.MasterReplica;
import io.lettuce.core.protocol.CommandExpiryWriter;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.Timer;
import io.relock.RelockConfig;
import io.relock.RelockException;
import java.io.IOException;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;

/**
 * The client's connections to Redis, whatever the topology: one for commands and one for
 * pub/sub (in a cluster, Lettuce keeps one of each per node behind them). Lettuce does the
 * topology work: finding the master through Sentinel, routing by slot and following redirects
 * in a cluster, reconnecting. Scripts run with EVALSHA and fall back to EVAL (which caches them
 * again) when a server answers NOSCRIPT, e.g. after a restart, a failover or on a new node.
 *
 * <p>At most once: Lettuce never re-sends a command by itself (a command in flight when its
 * connection breaks fails, one issued while disconnected fails at once). The gateway retries
 * within the caller's {@link Budget}, and tells a script when its run may repeat one that took
 * effect, so that the script can answer as the first run did.
 *
 * <p>In a cluster of Redis 7 or newer, unlock notifications use sharded pub/sub: the release
 * scripts SPUBLISH and waiters SSUBSCRIBE on the node that owns the lock's slot, so a message
 * does not travel the whole cluster bus.
 */
public final class RedisGateway implements AutoCloseable, RenewalGateway {

    /** Connecting (TCP and handshake) may take at least this long, whatever the command timeout. */
    static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /**
     * How often a cluster client re-reads the slot map even when nothing prompted it. Redisson
     * scans every second too; with Lettuce's 5 s a failover took 3 s longer to be noticed.
     */
    static final Duration CLUSTER_REFRESH_PERIOD = Duration.ofSeconds(1);

    /** The shortest time between two slot map reads that errors trigger. */
    static final Duration ADAPTIVE_REFRESH_LIMIT = Duration.ofMillis(500);

    /** Attempts at a connection whose handshake ended in "Connection closed prematurely"; see handshake(). */
    private static final int HANDSHAKE_ATTEMPTS = 3;

    private static final Logger LOG = LoggerFactory.getLogger(RedisGateway.class);

    private final AbstractRedisClient client;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterAsyncCommands<String, String> commands;
    private final StatefulRedisClusterConnection<String, String> cluster;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final boolean sharded;
    private final int syncReplicas;
    private final long syncTimeoutMillis;
    private final String target;
    private volatile Disposable topologyEvents;

    /** Counts command connections of this client that broke; see {@link #connectionEpoch()}. */
    private final AtomicLong disconnects = new AtomicLong();

    private final Timer timer;
    private final long commandTimeoutNanos;
    private final boolean canFailOver;
    private final List<StatefulRedisPubSubConnection<String, String>> sentinelWatch;

    /** Set when a reconnect attempt failed, cleared when a connection is up again. */
    private volatile boolean unreachable;
    private volatile boolean closed;
    private final Disposable reconnectFailures;

    private RedisGateway(Connected connected, RelockConfig config, String target) {
        this.client = connected.client;
        this.connection = connected.connection;
        this.commands = connected.commands;
        this.cluster = connected.cluster;
        this.pubSub = connected.pubSub;
        this.sharded = connected.sharded;
        this.syncReplicas = config.replicaSyncMinReplicas();
        this.syncTimeoutMillis = config.replicaSyncTimeout().toMillis();
        this.target = target;
        this.timer = client.getResources().timer();
        this.commandTimeoutNanos = config.commandTimeout().toNanos();
        this.canFailOver = config.topology() == RelockConfig.Topology.SENTINEL
                || config.topology() == RelockConfig.Topology.CLUSTER;
        this.sentinelWatch = connected.sentinelWatch;
        client.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
                unreachable = false;
            }

            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
                // Not when closed on purpose (a cluster client opens and closes a connection to
                // every node at each slot-map refresh), and not the pub/sub connection: WAIT
                // counts the writes of the command connection only.
                if (!connection.isClosed() && !(connection instanceof StatefulRedisPubSubConnection)) {
                    disconnects.incrementAndGet();
                }
            }
        });
        reconnectFailures = client.getResources().eventBus().get()
                .filter(ReconnectFailedEvent.class::isInstance)
                .subscribe(event -> unreachable = true);
        for (StatefulRedisPubSubConnection<String, String> sentinel : sentinelWatch) {
            sentinel.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    onSwitchMaster(message, config.masterName());
                }
            });
        }
    }

    /**
     * Changes whenever one of the client's connections broke. Lettuce re-sends the commands that
     * were in flight then (at least once), so a reply that arrives after a change may belong to a
     * command that ran twice, or on another server: callers compare the epoch before and after.
     */
    @Override
    public long connectionEpoch() {
        return disconnects.get();
    }

    /**
     * Sentinel announced a new master: the command and pub/sub connections are dropped at once
     * so that Lettuce reconnects through the Sentinels to the new master. Waiting for the old
     * master to close them would let writes land on a deposed master meanwhile.
     */
    private void onSwitchMaster(String message, String masterName) {
        // "<name> <old ip> <old port> <new ip> <new port>"
        String[] parts = message.split(" ");
        if (parts.length == 5 && parts[0].equals(masterName) && !closed) {
            LOG.info("Sentinel switched master '{}' to {}:{}; reconnecting", masterName, parts[3], parts[4]);
            disconnect(connection);
            disconnect(pubSub);
        }
    }

    private static void disconnect(StatefulConnection<?, ?> connection) {
        if (!(connection instanceof RedisChannelHandler<?, ?> handler)) {
            return;
        }
        RedisChannelWriter writer = handler.getChannelWriter();
        while (writer instanceof CommandExpiryWriter expiry) {
            writer = expiry.getDelegate();
        }
        if (writer instanceof DefaultEndpoint endpoint) {
            endpoint.disconnect();
        }
    }

    /** What one topology's connect produced; closed as a whole when a later step fails. */
    private static final class Connected {
        AbstractRedisClient client;
        StatefulConnection<String, String> connection;
        RedisClusterAsyncCommands<String, String> commands;
        StatefulRedisClusterConnection<String, String> cluster;
        StatefulRedisPubSubConnection<String, String> pubSub;
        List<StatefulRedisPubSubConnection<String, String>> sentinelWatch = new ArrayList<>();
        boolean sharded;

        void close() {
            sentinelWatch.forEach(StatefulConnection::close);
            if (pubSub != null) {
                pubSub.close();
            }
            if (connection != null) {
                connection.close();
            }
            if (client != null) {
                client.shutdown(0, 0, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Connects, loads every script and, with replica sync on, checks that the server accepts
     * {@code WAIT}.
     *
     * @throws io.relock.RelockConnectionException if Redis is unreachable, refuses the
     *     credentials, or cannot do what the configuration asks
     */
    public static RedisGateway connect(RelockConfig config, ClientResources resources, String clientId) {
        String target = config.topology() + " " + config.serverUris().stream().map(RedisUris::redact).toList();
        Connected connected = new Connected();
        try {
            switch (config.topology()) {
                case SINGLE_SERVER -> connectSingle(config, resources, clientId, connected);
                case SENTINEL -> connectSentinel(config, resources, clientId, connected);
                case MASTER_REPLICA -> connectMasterReplica(config, resources, clientId, connected);
                case CLUSTER -> connectCluster(config, resources, clientId, connected);
            }
            RedisGateway gateway = new RedisGateway(connected, config, target);
            gateway.loadScripts();
            if (gateway.syncReplicas > 0) {
                gateway.checkWait();
            }
            gateway.checkEviction();
            return gateway;
        } catch (RuntimeException e) {
            connected.close();
            throw Exceptions.cannotConnect(target, e);
        }
    }

    private static Duration connectTimeout(RelockConfig config) {
        // The handshake (HELLO, CLIENT SETNAME) of a cold JVM can take longer than a tight command
        // timeout; commands keep the command timeout through the timeout options.
        Duration timeout = config.commandTimeout();
        return timeout.compareTo(MIN_CONNECT_TIMEOUT) >= 0 ? timeout : MIN_CONNECT_TIMEOUT;
    }

    private static TimeoutOptions timeouts(RelockConfig config) {
        long commandNanos = config.commandTimeout().toNanos();
        // WAIT blocks on the server for up to the replica-sync timeout by design.
        long waitNanos = commandNanos + config.replicaSyncTimeout().toNanos();
        return TimeoutOptions.builder().timeoutSource(new TimeoutOptions.TimeoutSource() {
            @Override
            public long getTimeout(RedisCommand<?, ?, ?> command) {
                return command.getType() == CommandType.WAIT ? waitNanos : commandNanos;
            }

            @Override
            public TimeUnit getTimeUnit() {
                return TimeUnit.NANOSECONDS;
            }
        }).build();
    }

    private static <B extends ClientOptions.Builder> B options(B builder, RelockConfig config) {
        builder.autoReconnect(true)
                // At most once: a command in flight when its connection breaks fails instead of
                // being re-sent after the reconnect, and a command issued while disconnected fails
                // at once; the gateway's own retries re-run scripts knowing they may have run.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(timeouts(config))
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout(config)).build());
        if (config.trustedCertificates() != null || config.trustManagerFactory() != null
                || config.keyManagerFactory() != null) {
            SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
            if (config.trustedCertificates() != null) {
                ssl.trustManager(config.trustedCertificates().toFile());
            }
            if (config.trustManagerFactory() != null) {
                ssl.trustManager(config.trustManagerFactory());
            }
            if (config.keyManagerFactory() != null) {
                ssl.keyManager(config.keyManagerFactory());
            }
            builder.sslOptions(ssl.build());
        }
        return builder;
    }

    /**
     * The configured user and password. A credentials provider, not {@code setAuthentication}: that
     * method is Lettuce 7's, and Spring Boot 4.0 applications run Relock on Lettuce 6.8.
     */
    private static StaticCredentialsProvider credentials(RelockConfig config) {
        return new StaticCredentialsProvider(config.username(), config.password());
    }

    /** Parses a data node's URI, with the configured credentials when it carries none. */
    private static RedisURI dataNode(String text, String setting, RelockConfig config, String clientId) {
        RedisURI uri = RedisUris.parse(text, setting).uri();
        if (config.topology() != RelockConfig.Topology.CLUSTER) {
            uri.setDatabase(config.database());
        }
        char[] password = config.password();
        if (password != null && !RedisUris.hasCredentials(text)) {
            uri.setCredentialsProvider(credentials(config));
        }
        uri.setTimeout(connectTimeout(config));
        uri.setClientName("relock:" + clientId);
        return uri;
    }

    private static void connectSingle(RelockConfig config, ClientResources resources, String clientId,
            Connected out) {
        RedisURI uri = dataNode(config.serverUris().get(0), "singleServer", config, clientId);
        connectTo(RedisClient.create(resources, uri), config, out);
    }

    /** One command and one pub/sub connection to where {@code client}'s URI points. */
    private static void connectTo(RedisClient client, RelockConfig config, Connected out) {
        client.setOptions(options(ClientOptions.builder(), config).build());
        out.client = client;
        StatefulRedisConnection<String, String> connection = handshake(() -> client.connect(StringCodec.UTF8));
        out.connection = connection;
        out.commands = connection.async();
        out.pubSub = handshake(() -> client.connectPubSub(StringCodec.UTF8));
    }

    /**
     * Connects, and once more when the handshake ended in "Connection closed prematurely". When
     * a handshake command fails (a wrong password, too many clients), Lettuce closes the channel
     * and reports the server's answer only once the close is done; the closed channel can report
     * itself first, and then the reason is lost. Seen about once in ten loaded runs of the
     * wrong-password test; a further attempt gets the server's answer.
     */
    private static <T> T handshake(Supplier<T> connect) {
        for (int attempt = 1;; attempt++) {
            try {
                return connect.get();
            } catch (RedisConnectionException e) {
                if (attempt == HANDSHAKE_ATTEMPTS || !closedPrematurely(e)) {
                    throw e;
                }
            }
        }
    }

    private static boolean closedPrematurely(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if ("Connection closed prematurely".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    private static void connectSentinel(RelockConfig config, ClientResources resources, String clientId,
            Connected out) {
        RedisURI.Builder builder = RedisURI.builder().withSentinelMasterId(config.masterName());
        boolean tls = true;
        for (String text : config.serverUris()) {
            RedisURI sentinel = RedisUris.parse(text, "sentinel").uri();
            sentinel.setTimeout(connectTimeout(config));
            tls &= sentinel.isSsl();
            builder.withSentinel(sentinel);
        }
        RedisURI uri = builder.withSsl(tls).withDatabase(config.database()).withTimeout(connectTimeout(config))
                .withClientName("relock:" + clientId).build();
        if (config.password() != null) {
            uri.setCredentialsProvider(credentials(config));
        }
        RedisClient client = RedisClient.create(resources, uri);
        connectTo(client, config, out);
        watchSentinels(client, uri, out);
    }

    /** Subscribes to {@code +switch-master} on every Sentinel that answers; none answering is no error. */
    private static void watchSentinels(RedisClient client, RedisURI uri, Connected out) {
        for (RedisURI sentinel : uri.getSentinels()) {
            try {
                StatefulRedisPubSubConnection<String, String> watch = client.connectPubSub(StringCodec.UTF8, sentinel);
                out.sentinelWatch.add(watch);
                watch.async().subscribe("+switch-master");
            } catch (RuntimeException e) {
                LOG.debug("cannot watch Sentinel {}:{} for master switches: {}", sentinel.getHost(), sentinel.getPort(),
                        e.toString());
            }
        }
    }

    private static void connectMasterReplica(RelockConfig config, ClientResources resources, String clientId,
            Connected out) {
        List<RedisURI> nodes = new ArrayList<>();
        for (String text : config.serverUris()) {
            nodes.add(dataNode(text, "masterReplica", config, clientId));
        }
        RedisClient client = RedisClient.create(resources);
        client.setOptions(options(ClientOptions.builder(), config).build());
        out.client = client;
        // Reads go to the master too (Lettuce's default): a lock must never be read from a
        // replica that has not caught up.
        StatefulRedisConnection<String, String> connection =
                handshake(() -> MasterReplica.connect(client, StringCodec.UTF8, nodes));
        out.connection = connection;
        out.commands = connection.async();
        out.pubSub = connectPubSubToMaster(client, nodes);
    }

    /** Finds the node that calls itself master; Lettuce's master/replica API has no pub/sub. */
    private static StatefulRedisPubSubConnection<String, String> connectPubSubToMaster(RedisClient client,
            List<RedisURI> nodes) {
        List<String> roles = new ArrayList<>();
        for (RedisURI node : nodes) {
            StatefulRedisPubSubConnection<String, String> candidate;
            try {
                candidate = client.connectPubSub(StringCodec.UTF8, node);
            } catch (RuntimeException e) {
                roles.add(node.getHost() + ":" + node.getPort() + " unreachable");
                continue;
            }
            String role = String.valueOf(candidate.sync().role().get(0));
            if ("master".equals(role)) {
                return candidate;
            }
            roles.add(node.getHost() + ":" + node.getPort() + " " + role);
            candidate.close();
        }
        throw new IllegalStateException("no master among the masterReplica nodes: " + roles);
    }

    private static void connectCluster(RelockConfig config, ClientResources resources, String clientId,
            Connected out) {
        List<RedisURI> seeds = new ArrayList<>();
        for (String text : config.serverUris()) {
            seeds.add(dataNode(text, "cluster", config, clientId));
        }
        RedisClusterClient client = RedisClusterClient.create(resources, seeds);
        client.setOptions(options(ClusterClientOptions.builder(), config)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        // Lettuce 7 re-reads the slot map on the errors a failover causes (MOVED,
                        // failing reconnects), by default at most every 30 s: the first refresh
                        // comes before the replica is promoted, so the next must come soon.
                        .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_LIMIT)
                        // Covers a quiet client, which sees no errors.
                        .enablePeriodicRefresh(CLUSTER_REFRESH_PERIOD)
                        .build())
                .build());
        out.client = client;
        StatefulRedisClusterConnection<String, String> connection = handshake(() -> client.connect(StringCodec.UTF8));
        out.connection = connection;
        out.cluster = connection;
        out.commands = connection.async();
        out.sharded = majorVersion(Futures.await(connection.async().info("server").toCompletableFuture(),
                "read the server version")) >= 7;
        out.pubSub = handshake(() -> client.connectPubSub(StringCodec.UTF8));
    }

    static int majorVersion(String info) {
        String version = infoField(info, "redis_version");
        if (version == null) {
            return 0;
        }
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private void loadScripts() {
        for (Script script : Script.values()) {
            String sha;
            try {
                sha = Futures.await(commands.scriptLoad(script.source(sharded)).toCompletableFuture(),
                        "load script " + script);
            } catch (RelockException e) {
                // In a cluster Lettuce sends SCRIPT LOAD to every node, and one may be down while
                // its replica serves: loading is only a head start there (EVALSHA falls back to
                // EVAL), so only a script the server rejects stops the client.
                if (cluster == null || e.getCause() instanceof RedisCommandExecutionException) {
                    throw e;
                }
                LOG.debug("could not preload scripts on every cluster node: {}", e.getMessage());
                return;
            }
            if (!script.sha(sharded).equals(sha)) {
                throw new IllegalStateException("Redis computed SHA " + sha + " for " + script + ", expected "
                        + script.sha(sharded));
            }
        }
    }

    /**
     * Warns once when the server may evict lock keys: every lock key has a TTL, so a
     * {@code volatile-*} policy picks them first, and an {@code allkeys-*} policy may pick them
     * too. An evicted key is a released lock while its holder works on (the watchdog reports it
     * as lost at its next renewal, too late).
     */
    private void checkEviction() {
        String policy;
        try {
            policy = infoField(Futures.await(commands.info("memory").toCompletableFuture(), "read INFO memory"),
                    "maxmemory_policy");
        } catch (RuntimeException e) {
            LOG.debug("cannot read the maxmemory-policy of {} ({}); not checked", target, e.getMessage());
            return;
        }
        if (policy != null && !policy.equals("noeviction")) {
            LOG.warn("Redis at {} has maxmemory-policy '{}': when it reaches maxmemory it may evict lock keys "
                    + "(they have a TTL), which releases locks while their holders still work; use 'noeviction' "
                    + "for the Redis that holds locks", target, policy);
        }
    }

    static String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        return null;
    }

    private void checkWait() {
        try {
            Futures.await(commands.waitForReplication(0, 1).toCompletableFuture(), "WAIT");
        } catch (RuntimeException e) {
            throw new IllegalStateException("replicaSync is on but the server refuses WAIT (a managed Redis may "
                    + "not offer it); turn replicaSync off or use a server that has it: "
                    + Exceptions.unwrap(e).getMessage(), e);
        }
    }

    /**
     * How long a call may keep trying through connection trouble, as {@link System#nanoTime()}
     * instants: until {@code deadlineNanos} at most; and, on a single server, only until
     * {@code patientUntilNanos} once the server refuses connections (nothing could take its place).
     */
    public record Budget(long deadlineNanos, long patientUntilNanos) {}

    /** The budget of a call that does not wait: the command timeout from now. */
    public Budget budget() {
        long now = System.nanoTime();
        return new Budget(now + commandTimeoutNanos, now);
    }

    /**
     * The budget of a waiting call: until {@code waitDeadlineNanos}, and at least the command
     * timeout. A single server that refuses connections ends it at once: nothing can take its place.
     */
    public Budget budget(long waitDeadlineNanos) {
        long now = System.nanoTime();
        return new Budget(Math.max(waitDeadlineNanos, now + commandTimeoutNanos), canFailOver ? waitDeadlineNanos : now);
    }

    @Override
    public CompletableFuture<List<Object>> renew(Script script, String[] keys, String[] args) {
        return eval(script, ScriptOutputType.MULTI, keys, args);
    }

    /** Runs a script within the default {@link #budget()}; a null reply completes with null. */
    public <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, String[] keys, String... args) {
        return eval(script, type, budget(), false, keys, args);
    }

    /**
     * Runs a script, retrying through connection trouble and failovers within {@code budget}. Every
     * script gets one more argument, last: {@code '1'} when this run may repeat one that already
     * took effect (a retry, or {@code repeat} set by the caller), else {@code '0'}; scripts that
     * change state use it to answer a repeat with the first run's outcome instead of applying it
     * twice. A null reply completes with null.
     */
    public <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, Budget budget, boolean repeat,
            String[] keys, String... args) {
        String[] first = withRepeatFlag(args, repeat);
        String[] again = withRepeatFlag(args, true);
        return retrying(budget, attempt -> evalOnce(script, type, keys, attempt == 0 ? first : again));
    }

    // ---- the only commands besides scripts: typed, so no caller holds raw Lettuce commands ----

    /** HGET: one field of a hash, or null. */
    public CompletableFuture<String> hashField(String key, String field) {
        return read(commands -> commands.hget(key, field));
    }

    /** HGETALL: a whole hash, empty when the key is missing. */
    public CompletableFuture<Map<String, String>> hash(String key) {
        return read(commands -> commands.hgetall(key));
    }

    /** GET: a string value, or null. */
    public CompletableFuture<String> value(String key) {
        return read(commands -> commands.get(key));
    }

    /** EXISTS of one key. */
    public CompletableFuture<Boolean> exists(String key) {
        return this.<Long>read(commands -> commands.exists(key)).thenApply(count -> count > 0);
    }

    /** PTTL: milliseconds left, -1 without expiry, -2 when missing. */
    public CompletableFuture<Long> ttl(String key) {
        return read(commands -> commands.pttl(key));
    }

    /** HSET of {@code fields} then PEXPIRE, pipelined; both may run twice without harm. */
    public CompletableFuture<Void> putHash(String key, Map<String, String> fields, long ttlMillis) {
        CompletableFuture<Long> written = idempotent(commands -> commands.hset(key, fields));
        return written.thenCombine(expire(key, ttlMillis), (ignored, alsoIgnored) -> null);
    }

    /** PEXPIRE: whether the key existed. */
    public CompletableFuture<Boolean> expire(String key, long ttlMillis) {
        return idempotent(commands -> commands.pexpire(key, ttlMillis));
    }

    /** DEL of one key: how many keys were removed. */
    public CompletableFuture<Long> delete(String key) {
        return idempotent(commands -> commands.del(key));
    }

    /** Runs a read-only command, retrying within the default {@link #budget()}. */
    private <T> CompletableFuture<T> read(Function<RedisClusterAsyncCommands<String, String>, RedisFuture<T>> command) {
        return retrying(budget(), attempt -> command.apply(commands).toCompletableFuture());
    }

    /**
     * Runs a command whose second run changes nothing the first did not (HSET of the same
     * values, PEXPIRE, DEL), retrying within the default {@link #budget()}.
     */
    private <T> CompletableFuture<T> idempotent(
            Function<RedisClusterAsyncCommands<String, String>, RedisFuture<T>> command) {
        return retrying(budget(), attempt -> command.apply(commands).toCompletableFuture());
    }

    private static String[] withRepeatFlag(String[] args, boolean repeat) {
        String[] flagged = Arrays.copyOf(args, args.length + 1);
        flagged[args.length] = repeat ? "1" : "0";
        return flagged;
    }

    private <T> CompletableFuture<T> evalOnce(Script script, ScriptOutputType type, String[] keys, String[] args) {
        String sha = script.sha(sharded);
        CompletableFuture<T> bySha = commands.<T>evalsha(sha, type, keys, args).toCompletableFuture();
        return bySha.exceptionallyCompose(error -> {
            if (Exceptions.unwrap(error) instanceof RedisNoScriptException) {
                return commands.<T>eval(script.source(sharded), type, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(Exceptions.unwrap(error));
        });
    }

    /** The longest pause between two tries: short, since a reconnect or a promotion is awaited. */
    static final long MAX_RETRY_PAUSE_MILLIS = 200;

    private <T> CompletableFuture<T> retrying(Budget budget,
            IntFunction<CompletableFuture<T>> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        tryOnce(budget, call, 0, result);
        return result;
    }

    private <T> void tryOnce(Budget budget, IntFunction<CompletableFuture<T>> call, int attempt,
            CompletableFuture<T> result) {
        CompletableFuture<T> reply;
        try {
            reply = call.apply(attempt);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            Throwable failure = Exceptions.unwrap(error);
            long pauseMillis = Math.min(MAX_RETRY_PAUSE_MILLIS, 10L << Math.min(attempt, 5));
            long now = System.nanoTime();
            boolean refused = !canFailOver && unreachable && now - budget.patientUntilNanos() >= 0;
            if (closed || !transientFailure(failure) || refused
                    || now + TimeUnit.MILLISECONDS.toNanos(pauseMillis) - budget.deadlineNanos() > 0) {
                result.completeExceptionally(failure);
                return;
            }
            LOG.debug("retrying after {} (attempt {})", failure.toString(), attempt + 1);
            onTransientFailure(failure);
            timer.newTimeout(timeout -> tryOnce(budget, call, attempt + 1, result), pauseMillis, TimeUnit.MILLISECONDS);
        });
    }

    private final AtomicLong lastRefreshNanos = new AtomicLong(System.nanoTime());

    /**
     * Helps the retry along: a cluster re-reads its slot map (a promoted replica is found now,
     * not at the next periodic refresh), and a Sentinel client that met a demoted master
     * ({@code READONLY}) reconnects, asking the Sentinels where the master is.
     */
    private void onTransientFailure(Throwable failure) {
        if (String.valueOf(failure.getMessage()).startsWith("READONLY") && sentinelWatch != null
                && !sentinelWatch.isEmpty()) {
            disconnect(connection);
            return;
        }
        long last = lastRefreshNanos.get();
        long now = System.nanoTime();
        if (client instanceof RedisClusterClient clusterClient && now - last >= ADAPTIVE_REFRESH_LIMIT.toNanos()
                && lastRefreshNanos.compareAndSet(last, now)) {
            clusterClient.refreshPartitionsAsync();
        }
    }

    /**
     * Failures after which the same call may succeed: the connection broke or is being
     * re-established, the command timed out, or the node is not (yet) a writable master.
     */
    static boolean transientFailure(Throwable failure) {
        if (failure instanceof RedisCommandTimeoutException || failure instanceof RedisConnectionException
                || failure instanceof IOException) {
            return true;
        }
        String message = String.valueOf(failure.getMessage());
        if (failure instanceof RedisCommandExecutionException) {
            return message.startsWith("READONLY") || message.startsWith("MASTERDOWN") || message.startsWith("LOADING")
                    || message.startsWith("CLUSTERDOWN") || message.startsWith("TRYAGAIN");
        }
        return failure instanceof RedisException && (message.contains("not connected")
                || message.contains("Connection disconnected") || message.contains("Connection closed")
                || message.contains("Connection reset"));
    }

    /** The pub/sub connection. */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return pubSub;
    }

    /** Whether unlock notifications use sharded pub/sub (SSUBSCRIBE/SPUBLISH). */
    public boolean sharded() {
        return sharded;
    }

    /** The hash slot of a key (0 outside a cluster, where all keys may share a call). */
    @Override
    public int slotOf(String key) {
        return cluster != null ? SlotHash.getSlot(key) : 0;
    }

    /** Whether acquires, renewals and releases wait for replica acknowledgements. */
    public boolean replicaSync() {
        return syncReplicas > 0;
    }

    /** How many replicas must acknowledge, and for how long to wait. */
    @Override
    public int replicaSyncMinReplicas() {
        return syncReplicas;
    }

    @Override
    public long replicaSyncTimeoutMillis() {
        return syncTimeoutMillis;
    }

    /**
     * Confirms a write to {@code key} that was sent when the {@linkplain #connectionEpoch()
     * connection epoch} was {@code epochBefore}: at once with replica sync off; else by
     * {@code WAIT} on the connection that made it. Acquire, renewal and release all end here.
     * Fails only for an error that is not connection trouble.
     */
    @Override
    public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
        if (syncReplicas == 0) {
            return CONFIRMED;
        }
        return waitForReplicas(key).handle((acks, error) -> {
            // WAIT counts the writes of the connection it runs on: after a reconnect it answers
            // for a connection that wrote nothing, perhaps on a promoted replica without the write.
            if (connectionEpoch() != epochBefore || (error != null && transientFailure(Exceptions.unwrap(error)))) {
                return WriteConfirmation.UNSURE;
            }
            if (error != null) {
                throw error instanceof CompletionException completion ? completion : new CompletionException(error);
            }
            return acks >= syncReplicas ? WriteConfirmation.CONFIRMED : WriteConfirmation.tooFew(acks);
        });
    }

    private static final CompletableFuture<WriteConfirmation> CONFIRMED =
            CompletableFuture.completedFuture(WriteConfirmation.CONFIRMED);

    /**
     * Sends {@code WAIT} on the connection that wrote {@code key}, completing with the number of
     * replicas that acknowledged this connection's writes so far.
     */
    private CompletableFuture<Long> waitForReplicas(String key) {
        if (cluster == null) {
            return commands.waitForReplication(syncReplicas, syncTimeoutMillis).toCompletableFuture();
        }
        // WAIT counts the writes of one connection: it must go to the node connection the
        // slot's writes went through.
        return slotMaster(key).thenCompose(node -> node.async().waitForReplication(syncReplicas, syncTimeoutMillis));
    }

    /** The connection that Lettuce routes {@code key}'s commands through (keyed by the master's host and port). */
    private CompletableFuture<StatefulRedisConnection<String, String>> slotMaster(String key) {
        RedisClusterNode master = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        if (master == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("no master owns the slot of " + key));
        }
        RedisURI uri = master.getUri();
        return cluster.getConnectionAsync(uri.getHost(), uri.getPort());
    }

    /** How many clients are subscribed to each channel, as the server that carries it counts them. */
    public CompletableFuture<Map<String, Long>> subscribers(String... channels) {
        if (!sharded) {
            return commands.pubsubNumsub(channels).toCompletableFuture();
        }
        // Sharded subscriptions live on the slot's master; the channels of one lock share a slot.
        return slotMaster(channels[0]).thenCompose(node -> node.async().pubsubShardNumsub(channels));
    }

    /**
     * Runs {@code action} (on a Lettuce thread) whenever a cluster's slot map changed, e.g. after
     * a failover; never outside a cluster. Stops at {@link #close()}.
     */
    public void onTopologyChange(Runnable action) {
        if (cluster == null) {
            return;
        }
        topologyEvents = client.getResources().eventBus().get()
                .filter(ClusterTopologyChangedEvent.class::isInstance)
                .subscribe(event -> action.run());
    }

    /** Where the client connects, without credentials. */
    public String target() {
        return target;
    }

    @Override
    public void close() {
        closed = true;
        reconnectFailures.dispose();
        sentinelWatch.forEach(StatefulConnection::close);
        Disposable events = topologyEvents;
        if (events != null) {
            events.dispose();
        }
        pubSub.close();
        connection.close();
        client.shutdown(0, 0, TimeUnit.MILLISECONDS);
    }
}
