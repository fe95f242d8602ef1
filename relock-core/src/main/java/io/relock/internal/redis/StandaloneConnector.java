package io.relock.internal.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;

/** One Redis server: a command and a pub/sub connection to the configured URI. */
final class StandaloneConnector extends Connector {

    StandaloneConnector(RelockConfig config, ClientResources resources, String clientId) {
        super(config, resources, clientId);
    }

    @Override
    void connect(Connected out) {
        connectTo(RedisClient.create(resources, dataNode(config.serverUris().get(0), "singleServer")), out);
    }
}
