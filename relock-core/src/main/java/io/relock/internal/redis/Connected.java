package io.relock.internal.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import reactor.core.Disposable;

/**
 * What a {@link Connector} opened, whatever the topology: the Lettuce client, one command and one
 * pub/sub connection (in a cluster, Lettuce keeps one of each per node behind them), and how to
 * reach the node that holds a key. A connector fills it in step by step, so that a failure
 * part-way closes what was opened; afterwards it is read-only.
 */
final class Connected implements AutoCloseable {

    AbstractRedisClient client;
    StatefulConnection<String, String> connection;
    RedisClusterAsyncCommands<String, String> commands;
    /** The same connection as {@link #connection} in a cluster; null elsewhere. */
    StatefulRedisClusterConnection<String, String> cluster;
    StatefulRedisPubSubConnection<String, String> pubSub;
    /** Whether unlock notifications use sharded pub/sub (a cluster of Redis 7 or newer). */
    boolean sharded;
    /** A Sentinel client's watch for master switches; null elsewhere. */
    SentinelWatch sentinels;
    /**
     * The topology's help for a retry after {@link RetryLoop#transientFailure a transient
     * failure}: a cluster re-reads its slot map, a Sentinel client leaves a demoted master.
     */
    Consumer<Throwable> recovery = failure -> {};

    private volatile Disposable topologyEvents;

    /** The hash slot of a key (0 outside a cluster, where all keys may share a call). */
    int slotOf(String key) {
        return cluster != null ? SlotHash.getSlot(key) : 0;
    }

    /**
     * In a cluster, the node connection that Lettuce routes {@code key}'s commands through (keyed
     * by the master's host and port).
     */
    CompletableFuture<StatefulRedisConnection<String, String>> slotMaster(String key) {
        RedisClusterNode master = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        if (master == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("no master owns the slot of " + key));
        }
        RedisURI uri = master.getUri();
        return cluster.getConnectionAsync(uri.getHost(), uri.getPort());
    }

    /** See {@link RedisGateway#onTopologyChange(Runnable)}. */
    void onTopologyChange(Runnable action) {
        if (cluster == null) {
            return;
        }
        topologyEvents = client.getResources().eventBus().get()
                .filter(ClusterTopologyChangedEvent.class::isInstance)
                .subscribe(event -> action.run());
    }

    @Override
    public void close() {
        if (sentinels != null) {
            sentinels.close();
        }
        Disposable events = topologyEvents;
        if (events != null) {
            events.dispose();
        }
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
