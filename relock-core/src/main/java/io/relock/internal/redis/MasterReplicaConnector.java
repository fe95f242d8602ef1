package io.relock.internal.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.masterreplica.MasterReplica;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import java.util.ArrayList;
import java.util.List;

/** A master and its replicas, all named in the configuration; every command goes to the master. */
final class MasterReplicaConnector extends Connector {

    MasterReplicaConnector(RelockConfig config, ClientResources resources, String clientId) {
        super(config, resources, clientId);
    }

    @Override
    void connect(Connected out) {
        List<RedisURI> nodes = dataNodes("masterReplica");
        RedisClient client = RedisClient.create(resources);
        client.setOptions(options(ClientOptions.builder()).build());
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
}
