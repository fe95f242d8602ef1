package io.relock.internal.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import io.relock.internal.support.Exceptions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The client's connections to Redis, whatever the topology, and the one way the rest of the
 * client talks to them: scripts, a few typed commands, write confirmation and pub/sub. The work
 * is done behind it: a {@link Connector} per topology opens the connections ({@link Connected}),
 * a {@link SentinelWatch} follows master switches, the {@link ScriptRunner} runs scripts through
 * the {@link RetryLoop}, {@link ReplicaSync} confirms writes, and {@link ServerChecks} looks at
 * the server once connected.
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

    /** The longest pause between two tries of a call; see {@link RetryLoop}. */
    public static final long MAX_RETRY_PAUSE_MILLIS = RetryLoop.MAX_RETRY_PAUSE_MILLIS;

    private final Connected connected;
    private final ConnectionState state;
    private final RetryLoop retries;
    private final ScriptRunner scripts;
    private final ReplicaSync replicas;
    private final String target;

    private RedisGateway(Connected connected, RelockConfig config, String target, LongSupplier nanoTime) {
        this.connected = connected;
        this.target = target;
        this.state = new ConnectionState(connected.client);
        boolean canFailOver = config.topology() == RelockConfig.Topology.SENTINEL
                || config.topology() == RelockConfig.Topology.CLUSTER;
        this.retries = new RetryLoop(connected.client.getResources().timer(), nanoTime,
                config.commandTimeout().toNanos(), canFailOver, state, connected.recovery);
        this.scripts = new ScriptRunner(connected, retries);
        this.replicas = new ReplicaSync(config, connected, state);
    }

    /**
     * Connects, loads every script and, with replica sync on, checks that the server accepts
     * {@code WAIT}.
     *
     * @param nanoTime the client's clock, for every budget and retry
     * @throws io.relock.RelockConnectionException if Redis is unreachable, refuses the
     *     credentials, or cannot do what the configuration asks
     */
    public static RedisGateway connect(RelockConfig config, ClientResources resources, String clientId,
            LongSupplier nanoTime) {
        String target = config.topology() + " " + config.serverUris().stream().map(RedisUris::redact).toList();
        Connected connected = new Connected();
        try {
            Connector.of(config, resources, clientId, nanoTime).connect(connected);
            RedisGateway gateway = new RedisGateway(connected, config, target, nanoTime);
            gateway.scripts.preload();
            if (gateway.replicas.enabled()) {
                ServerChecks.requireWait(connected.commands);
            }
            ServerChecks.warnOnEviction(connected.commands, target);
            return gateway;
        } catch (RuntimeException e) {
            connected.close();
            throw Exceptions.cannotConnect(target, e);
        }
    }

    /**
     * Changes whenever one of the client's connections broke. Lettuce re-sends the commands that
     * were in flight then (at least once), so a reply that arrives after a change may belong to a
     * command that ran twice, or on another server: callers compare the epoch before and after.
     */
    @Override
    public long connectionEpoch() {
        return state.epoch();
    }

    /**
     * How long a call may keep trying through connection trouble, as instants of the client's
     * clock: until {@code deadlineNanos} at most; only until {@code patientUntilNanos} once a
     * single server refuses connections; and no longer once {@code stopped} says so (the caller
     * gave up: an interrupt, a cancel).
     */
    public record Budget(long deadlineNanos, long patientUntilNanos, BooleanSupplier stopped) {

        private static final BooleanSupplier NEVER = () -> false;

        /** A budget that only its instants end. */
        public Budget(long deadlineNanos, long patientUntilNanos) {
            this(deadlineNanos, patientUntilNanos, NEVER);
        }

        /** This budget, also ended when {@code stop} says so. */
        public Budget stoppedBy(BooleanSupplier stop) {
            return new Budget(deadlineNanos, patientUntilNanos, stop);
        }
    }

    /**
     * The budget of a call that does not wait: the command timeout from now. A single server
     * that refuses connections ends it at once: nothing can take its place.
     */
    public Budget budget() {
        return retries.budget();
    }

    /**
     * The budget of a waiting call: until {@code waitDeadlineNanos}, and at least the command
     * timeout. It rides through a reconnect, also of a single server that refuses connections
     * for a while (a restart), until {@code waitDeadlineNanos}.
     */
    public Budget budget(long waitDeadlineNanos) {
        return retries.budget(waitDeadlineNanos);
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
     * Runs a script, retrying through connection trouble and failovers within {@code budget}. A run
     * that may repeat one that already took effect (a retry, or {@code repeat} set by the caller)
     * gets one more argument, last, {@code '1'}; scripts that change state use it to answer a
     * repeat with the first run's outcome instead of applying it twice. Other runs go without it
     * (scripts compare that argument with {@code '1'}, and a missing one is nil), and without
     * their trailing {@code '0'} arguments where the script {@link Script#takesFewerArguments()
     * reads a missing one as '0'}: Redis spends about a thousand instructions per argument on
     * parsing it and on the script's argument table. A null reply completes with null.
     */
    public <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, Budget budget, boolean repeat,
            String[] keys, String... args) {
        return scripts.eval(script, type, budget, repeat, keys, args);
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
        return retries.run(budget(), attempt -> command.apply(connected.commands).toCompletableFuture());
    }

    /**
     * Runs a command whose second run changes nothing the first did not (HSET of the same
     * values, PEXPIRE, DEL), retrying within the default {@link #budget()}: a read as far as
     * retrying goes.
     */
    private <T> CompletableFuture<T> idempotent(
            Function<RedisClusterAsyncCommands<String, String>, RedisFuture<T>> command) {
        return read(command);
    }

    /** The pub/sub connection. */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return connected.pubSub;
    }

    /** Whether unlock notifications use sharded pub/sub (SSUBSCRIBE/SPUBLISH). */
    public boolean sharded() {
        return connected.sharded;
    }

    /** The hash slot of a key (0 outside a cluster, where all keys may share a call). */
    @Override
    public int slotOf(String key) {
        return connected.slotOf(key);
    }

    /** Whether acquires, renewals and releases wait for replica acknowledgements. */
    public boolean replicaSync() {
        return replicas.enabled();
    }

    /** How many replicas must acknowledge, and for how long to wait. */
    @Override
    public int replicaSyncMinReplicas() {
        return replicas.minReplicas();
    }

    @Override
    public long replicaSyncTimeoutMillis() {
        return replicas.timeoutMillis();
    }

    /**
     * Confirms a write to {@code key} that was sent when the {@linkplain #connectionEpoch()
     * connection epoch} was {@code epochBefore}: at once with replica sync off; else by
     * {@code WAIT} on the connection that made it. Acquire, renewal and release all end here.
     * Fails only for an error that is not connection trouble.
     */
    @Override
    public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
        return replicas.confirmWrite(key, epochBefore);
    }

    /** How many clients are subscribed to each channel, as the server that carries it counts them. */
    public CompletableFuture<Map<String, Long>> subscribers(String... channels) {
        if (!connected.sharded) {
            return connected.commands.pubsubNumsub(channels).toCompletableFuture();
        }
        // Sharded subscriptions live on the slot's master; the channels of one lock share a slot.
        return connected.slotMaster(channels[0]).thenCompose(node -> node.async().pubsubShardNumsub(channels));
    }

    /**
     * Runs {@code action} (on a Lettuce thread) whenever a cluster's slot map changed, e.g. after
     * a failover; never outside a cluster. Stops at {@link #close()}.
     */
    public void onTopologyChange(Runnable action) {
        connected.onTopologyChange(action);
    }

    /** Where the client connects, without credentials. */
    public String target() {
        return target;
    }

    @Override
    public void close() {
        retries.close();
        state.close();
        connected.close();
    }
}
