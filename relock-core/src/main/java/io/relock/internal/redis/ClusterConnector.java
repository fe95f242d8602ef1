package io.relock.internal.redis;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import io.relock.internal.support.Futures;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A Redis Cluster: Lettuce routes by slot, follows redirects and keeps the slot map fresh; the
 * connector makes it re-read the map soon after a failover. Unlock notifications use sharded
 * pub/sub on Redis 7 or newer, so that a message does not travel the whole cluster bus.
 */
final class ClusterConnector extends Connector {

    /**
     * How often a cluster client re-reads the slot map even when nothing prompted it. Redisson
     * scans every second too; with Lettuce's 5 s a failover took 3 s longer to be noticed.
     */
    static final Duration CLUSTER_REFRESH_PERIOD = Duration.ofSeconds(1);

    /** The shortest time between two slot map reads that errors trigger. */
    static final Duration ADAPTIVE_REFRESH_LIMIT = Duration.ofMillis(500);

    private final LongSupplier nanoTime;

    ClusterConnector(RelockConfig config, ClientResources resources, String clientId, LongSupplier nanoTime) {
        super(config, resources, clientId);
        this.nanoTime = nanoTime;
    }

    @Override
    void connect(Connected out) {
        RedisClusterClient client = RedisClusterClient.create(resources, dataNodes("cluster"));
        client.setOptions(options(ClusterClientOptions.builder())
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
        out.sharded = ServerChecks.majorVersion(Futures.await(connection.async().info("server").toCompletableFuture(),
                "read the server version")) >= 7;
        out.pubSub = handshake(() -> client.connectPubSub(StringCodec.UTF8));
        out.recovery = refreshOnFailure(client);
    }

    /**
     * Re-reads the slot map after a retried failure, at most every {@link #ADAPTIVE_REFRESH_LIMIT}:
     * a promoted replica is found now, not at the next periodic refresh.
     */
    private Consumer<Throwable> refreshOnFailure(RedisClusterClient client) {
        AtomicLong lastRefreshNanos = new AtomicLong(nanoTime.getAsLong());
        long limitNanos = ADAPTIVE_REFRESH_LIMIT.toNanos();
        return failure -> {
            long last = lastRefreshNanos.get();
            long now = nanoTime.getAsLong();
            if (now - last >= limitNanos && lastRefreshNanos.compareAndSet(last, now)) {
                client.refreshPartitionsAsync();
            }
        };
    }
}
