package io.relock.internal.redis;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.relock.internal.backend.ChannelCommands;
import io.relock.internal.backend.ChannelListener;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * The client's pub/sub connection as the unlock channels use it: each channel is subscribed
 * together with its {@linkplain #markOf mark}, in one command, and what the connection hears
 * goes to one {@link ChannelListener}. Lettuce's pub/sub types stop here; the engine sees
 * {@link ChannelCommands} and {@link ChannelListener} only.
 */
public final class PubSubChannels implements ChannelCommands {

    private final RedisGateway gateway;
    private final boolean sharded;

    /** Channels on {@code gateway}'s pub/sub connection; sharded (SSUBSCRIBE) on a Redis 7+ cluster. */
    public PubSubChannels(RedisGateway gateway) {
        this.gateway = gateway;
        this.sharded = gateway.sharded();
    }

    /**
     * The channel every Relock client subscribes to together with {@code channel}, in the same
     * command: nothing is published there, but the difference of the two channels' subscriber
     * counts is exactly how many clients other than Relock's listen (see {@code grant.lua}): the
     * <i>mark</i> of the hand-off's vocabulary (see {@code engine.Turn}). In the same Cluster
     * slot, as the lock's hash tag is its first brace.
     */
    public static String markOf(String channel) {
        return "relock:" + channel;
    }

    @Override
    public CompletableFuture<Void> subscribe(String channel) {
        StatefulRedisPubSubConnection<String, String> now = gateway.pubSubOrNull();
        if (now == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException("not connected to Redis yet"));
        }
        String mark = markOf(channel);
        return (sharded ? now.async().ssubscribe(channel, mark) : now.async().subscribe(channel, mark))
                .toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> unsubscribe(String channel) {
        StatefulRedisPubSubConnection<String, String> now = gateway.pubSubOrNull();
        if (now == null) {
            return CompletableFuture.completedFuture(null);
        }
        String mark = markOf(channel);
        return (sharded ? now.async().sunsubscribe(channel, mark) : now.async().unsubscribe(channel, mark))
                .toCompletableFuture();
    }

    /**
     * Sends what the pub/sub connection hears to {@code listener} once the connection exists (at
     * once, or when a client connecting in the background gets it): its messages, and its
     * connects, the first one included.
     */
    public void listen(ChannelListener listener) {
        gateway.whenConnected(connection -> {
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    listener.onMessage(channel, message);
                }

                @Override
                public void smessage(String channel, String message) {
                    listener.onMessage(channel, message);
                }
            });
            connection.addListener(new RedisConnectionStateListener() {
                @Override
                public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                    listener.onConnected();
                }
            });
            listener.onConnected();
        });
    }
}
