package io.relock.internal.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.Renewal;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.support.Exceptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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


    /** What exists once connected: the connections, what they went through, scripts and replica sync. */
    private record Link(Connected connected, ConnectionState state, ScriptRunner scripts, ReplicaSync replicas) {}

    private static final Logger LOG = LoggerFactory.getLogger(RedisGateway.class);
    /** The longest pause between two background connect attempts (see {@link #connectInBackground}). */
    static final long MAX_CONNECT_PAUSE_MILLIS = 1000;

    private final RelockConfig config;
    private final RetryLoop retries;
    private final String target;
    /** Null until connected (only a gateway connecting in the background is ever without it). */
    private volatile Link link;
    /** Told of the pub/sub connection once connected; guarded by itself. */
    private final List<Consumer<StatefulRedisPubSubConnection<String, String>>> onConnect = new ArrayList<>();
    private volatile boolean closed;

    private RedisGateway(RelockConfig config, ClientResources resources, String target, LongSupplier nanoTime) {
        this.config = config;
        this.target = target;
        boolean canFailOver = config.topology() == RelockConfig.Topology.SENTINEL
                || config.topology() == RelockConfig.Topology.CLUSTER;
        // Not connected yet counts as refused: a call without a wait fails at once, a waiting one waits.
        this.retries = new RetryLoop(resources.timer(), nanoTime, config.commandTimeout().toNanos(), canFailOver,
                () -> {
                    Link now = link;
                    return now == null || now.state.unreachable();
                }, failure -> {
                    Link now = link;
                    if (now != null) {
                        now.connected.recovery.accept(failure);
                    }
                });
    }

    /** Opens the connections and makes them this gateway's; fails, having closed what it opened. */
    private void link(RelockConfig config, ClientResources resources, String clientId, LongSupplier nanoTime) {
        Connected connected = new Connected();
        ConnectionState state = null;
        try {
            Connector.of(config, resources, clientId, nanoTime).connect(connected);
            state = new ConnectionState(connected.client);
            Link opened = new Link(connected, state, new ScriptRunner(connected, retries),
                    new ReplicaSync(config, connected, state));
            opened.scripts.preload();
            if (opened.replicas.enabled()) {
                ServerChecks.requireWait(connected.commands);
            }
            ServerChecks.warnOnEviction(connected.commands, target);
            List<Consumer<StatefulRedisPubSubConnection<String, String>>> told;
            synchronized (onConnect) {
                if (closed) {
                    state.close();
                    connected.close();
                    return;
                }
                link = opened;
                told = List.copyOf(onConnect);
            }
            told.forEach(action -> action.accept(connected.pubSub));
        } catch (RuntimeException e) {
            if (state != null) {
                state.close();
            }
            connected.close();
            throw Exceptions.cannotConnect(target, e);
        }
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
        RedisGateway gateway = new RedisGateway(config, resources, targetOf(config), nanoTime);
        gateway.link(config, resources, clientId, nanoTime);
        return gateway;
    }

    /**
     * A gateway that connects as {@link #connect} does, but does not fail when Redis is
     * unreachable: it tries again in the background (pausing 100 ms, doubling up to
     * {@link #MAX_CONNECT_PAUSE_MILLIS}) until it is connected or closed. Meanwhile every call
     * fails as when a single server refuses connections: at once without a wait, at the end of
     * its wait with one. Not for a cluster, whose pub/sub kind depends on the servers.
     */
    public static RedisGateway connectInBackground(RelockConfig config, ClientResources resources, String clientId,
            LongSupplier nanoTime) {
        RedisGateway gateway = new RedisGateway(config, resources, targetOf(config), nanoTime);
        gateway.tryToLink(config, resources, clientId, nanoTime, 1, 100);
        return gateway;
    }

    private void tryToLink(RelockConfig config, ClientResources resources, String clientId, LongSupplier nanoTime,
            int attempt, long pauseMillis) {
        if (closed) {
            return;
        }
        try {
            link(config, resources, clientId, nanoTime);
            if (attempt > 1) {
                LOG.info("connected to Redis at {} (attempt {})", target, attempt);
            }
            return;
        } catch (RuntimeException e) {
            if (attempt == 1) {
                LOG.warn("{}; connecting in the background, calls fail until then", e.getMessage());
            } else {
                LOG.debug("still cannot connect (attempt {}): {}", attempt, e.getMessage());
            }
        }
        try {
            // The attempt blocks (up to the connect timeout): on a worker, never on the timer's thread.
            resources.timer().newTimeout(timeout -> resources.eventExecutorGroup().execute(
                    () -> tryToLink(config, resources, clientId, nanoTime, attempt + 1,
                            Math.min(MAX_CONNECT_PAUSE_MILLIS, pauseMillis * 2))),
                    pauseMillis, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            LOG.debug("background connecting stops: the client's threads are gone ({})", e.toString());
        }
    }

    private static String targetOf(RelockConfig config) {
        return config.topology() + " " + config.serverUris().stream().map(RedisUris::redact).toList();
    }

    /** Whether the connections are open now (Lettuce reconnects them when they break). */
    public boolean isConnected() {
        Link now = link;
        return now != null && now.connected.connection.isOpen() && !now.state.unreachable();
    }

    /**
     * Runs {@code action} with the pub/sub connection once connected: at once if connected now,
     * else from the background connect that succeeds.
     */
    public void whenConnected(Consumer<StatefulRedisPubSubConnection<String, String>> action) {
        Link now;
        synchronized (onConnect) {
            now = link;
            if (now == null) {
                onConnect.add(action);
                return;
            }
        }
        action.accept(now.connected.pubSub);
    }

    /** The pub/sub connection, or null while not connected yet. */
    public StatefulRedisPubSubConnection<String, String> pubSubOrNull() {
        Link now = link;
        return now == null ? null : now.connected.pubSub;
    }

    /** The failure of a call made before the first connect succeeded. */
    static io.lettuce.core.RedisConnectionException notConnectedYet(String target) {
        return new io.lettuce.core.RedisConnectionException("not connected to Redis at " + target
                + " yet: connecting in the background");
    }

    /**
     * Changes whenever one of the client's connections broke. Lettuce re-sends the commands that
     * were in flight then (at least once), so a reply that arrives after a change may belong to a
     * command that ran twice, or on another server: callers compare the epoch before and after.
     */
    @Override
    public long connectionEpoch() {
        Link now = link;
        return now == null ? 0 : now.state.epoch();
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
    public CompletableFuture<List<Object>> renew(Renewal renewal, String[] keys, String[] args) {
        return eval((Script) renewal, ScriptOutputType.MULTI, keys, args);
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
        Link now = link;
        if (now == null) {
            // Not connected yet: a waiting call waits for the background connect, within its budget.
            java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();
            return retries.run(budget, attempt -> {
                Link later = link;
                // A try refused for want of a connection never reached Redis: only a sent one makes a repeat.
                return later == null ? CompletableFuture.failedFuture(notConnectedYet(target))
                        : later.scripts.eval(script, type, budget, sent.getAndSet(true) || repeat, keys, args);
            });
        }
        return now.scripts.eval(script, type, budget, repeat, keys, args);
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
        return retries.run(budget(), attempt -> {
            Link now = link;
            return now == null ? CompletableFuture.failedFuture(notConnectedYet(target))
                    : command.apply(now.connected.commands).toCompletableFuture();
        });
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

    /** Whether unlock notifications use sharded pub/sub (SSUBSCRIBE/SPUBLISH); false until connected. */
    public boolean sharded() {
        Link now = link;
        return now != null && now.connected.sharded;
    }

    /** The hash slot of a key (0 outside a cluster, where all keys may share a call). */
    @Override
    public int slotOf(String key) {
        Link now = link;
        return now == null ? 0 : now.connected.slotOf(key);
    }

    /** Whether acquires, renewals and releases wait for replica acknowledgements. */
    public boolean replicaSync() {
        return config.replicaSyncMinReplicas() > 0;
    }

    /** How many replicas must acknowledge, and for how long to wait. */
    @Override
    public int replicaSyncMinReplicas() {
        return config.replicaSyncMinReplicas();
    }

    @Override
    public long replicaSyncTimeoutMillis() {
        return config.replicaSyncTimeout().toMillis();
    }

    /**
     * Confirms a write to {@code key} that was sent when the {@linkplain #connectionEpoch()
     * connection epoch} was {@code epochBefore}: at once with replica sync off; else by
     * {@code WAIT} on the connection that made it. Acquire, renewal and release all end here.
     * Fails only for an error that is not connection trouble.
     */
    @Override
    public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
        Link now = link;
        if (now == null) {
            // No write can have been made before the first connect.
            return replicaSync() ? CompletableFuture.failedFuture(notConnectedYet(target))
                    : CompletableFuture.completedFuture(WriteConfirmation.CONFIRMED);
        }
        return now.replicas.confirmWrite(key, epochBefore);
    }

    /** How many clients are subscribed to each channel, as the server that carries it counts them. */
    public CompletableFuture<Map<String, Long>> subscribers(String... channels) {
        Link now = link;
        if (now == null) {
            return CompletableFuture.failedFuture(notConnectedYet(target));
        }
        Connected connected = now.connected;
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
        Link now = link;
        if (now != null) {
            now.connected.onTopologyChange(action);
        }
    }

    /** Where the client connects, without credentials. */
    public String target() {
        return target;
    }

    @Override
    public void close() {
        Link now;
        synchronized (onConnect) {
            closed = true;
            now = link;
        }
        retries.close();
        if (now != null) {
            now.state.close();
            now.connected.close();
        }
    }
}
