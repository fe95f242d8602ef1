package io.relock.internal.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;

/**
 * A master that Sentinels find: Lettuce asks them where the master is at each (re)connect, and a
 * {@link SentinelWatch} drops the connections when they announce a new one.
 */
final class SentinelConnector extends Connector {

    SentinelConnector(RelockConfig config, ClientResources resources, String clientId) {
        super(config, resources, clientId);
    }

    @Override
    void connect(Connected out) {
        RedisURI.Builder builder = RedisURI.builder().withSentinelMasterId(config.masterName());
        boolean tls = true;
        for (String text : config.serverUris()) {
            RedisURI sentinel = RedisUris.parse(text, "sentinel").uri();
            sentinel.setTimeout(connectTimeout());
            tls &= sentinel.isSsl();
            builder.withSentinel(sentinel);
        }
        RedisURI uri = builder.withSsl(tls).withDatabase(config.database()).withTimeout(connectTimeout())
                .withClientName("relock:" + clientId).build();
        if (config.password() != null) {
            uri.setCredentialsProvider(credentials());
        }
        RedisClient client = RedisClient.create(resources, uri);
        connectTo(client, out);
        SentinelWatch watch = new SentinelWatch(config.masterName(), out.connection, out.pubSub);
        out.sentinels = watch;
        out.recovery = watch::onTransientFailure;
        watch.start(client, uri);
    }
}
