package io.relock.internal.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;

/**
 * What the client's connections went through, as Lettuce reports it: how often the command
 * connection broke (the {@linkplain #epoch() epoch}), and whether the server refuses to be
 * reached right now.
 */
final class ConnectionState implements AutoCloseable {

    /** Counts command connections of this client that broke; see {@link #epoch()}. */
    private final AtomicLong disconnects = new AtomicLong();

    /** Set when a reconnect attempt failed, cleared when a connection is up again. */
    private volatile boolean unreachable;
    private final Disposable reconnectFailures;

    ConnectionState(AbstractRedisClient client) {
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
    }

    /** See {@link RedisGateway#connectionEpoch()}. */
    long epoch() {
        return disconnects.get();
    }

    /** Whether the last reconnect attempt failed and no connection came up since. */
    boolean unreachable() {
        return unreachable;
    }

    @Override
    public void close() {
        reconnectFailures.dispose();
    }
}
