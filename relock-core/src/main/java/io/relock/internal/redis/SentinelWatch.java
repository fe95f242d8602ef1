package io.relock.internal.redis;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandExpiryWriter;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leaves a deposed master at once. Lettuce asks the Sentinels for the master only when it
 * reconnects, and the old master may keep the connections open (and accept writes) for a while:
 * so the watch drops the command and pub/sub connections when a Sentinel announces
 * {@code +switch-master}, or when a command met a demoted master ({@code READONLY}).
 */
final class SentinelWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelWatch.class);

    private final String masterName;
    private final StatefulConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final List<StatefulRedisPubSubConnection<String, String>> watches = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    SentinelWatch(String masterName, StatefulConnection<String, String> connection,
            StatefulRedisPubSubConnection<String, String> pubSub) {
        this.masterName = masterName;
        this.connection = connection;
        this.pubSub = pubSub;
    }

    /** Subscribes to {@code +switch-master} on every Sentinel of {@code uri} that answers; none answering is no error. */
    void start(RedisClient client, RedisURI uri) {
        for (RedisURI sentinel : uri.getSentinels()) {
            try {
                StatefulRedisPubSubConnection<String, String> watch = client.connectPubSub(StringCodec.UTF8, sentinel);
                watches.add(watch);
                watch.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        onSwitchMaster(message);
                    }
                });
                watch.async().subscribe("+switch-master");
            } catch (RuntimeException e) {
                LOG.debug("cannot watch Sentinel {}:{} for master switches: {}", sentinel.getHost(), sentinel.getPort(),
                        e.toString());
            }
        }
    }

    /**
     * Sentinel announced a new master: the command and pub/sub connections are dropped at once
     * so that Lettuce reconnects through the Sentinels to the new master. Waiting for the old
     * master to close them would let writes land on a deposed master meanwhile.
     */
    private void onSwitchMaster(String message) {
        // "<name> <old ip> <old port> <new ip> <new port>"
        String[] parts = message.split(" ");
        if (parts.length == 5 && parts[0].equals(masterName) && !closed) {
            LOG.info("Sentinel switched master '{}' to {}:{}; reconnecting", masterName, parts[3], parts[4]);
            disconnect(connection);
            disconnect(pubSub);
        }
    }

    /** A command met a demoted master: reconnecting asks the Sentinels where the master is now. */
    void onTransientFailure(Throwable failure) {
        if (String.valueOf(failure.getMessage()).startsWith("READONLY") && !watches.isEmpty()) {
            disconnect(connection);
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

    @Override
    public void close() {
        closed = true;
        watches.forEach(StatefulConnection::close);
    }
}
