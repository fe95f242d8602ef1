package io.relock.cli;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One command's connections: a {@link Relock} client for what relock-core offers (lock info,
 * force-unlock with its release semantics) and a plain Lettuce connection, set up from the same
 * {@link RelockConfig}, for reads the library's API does not offer. Closing it closes both.
 */
final class Session implements AutoCloseable {

    private final RelockConfig config;
    private final Relock relock;
    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterCommands<String, String> commands;
    private final boolean cluster;

    private Session(RelockConfig config, Relock relock, ClientResources resources, AbstractRedisClient client,
            StatefulConnection<String, String> connection, RedisClusterCommands<String, String> commands) {
        this.config = config;
        this.relock = relock;
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.commands = commands;
        this.cluster = config.topology() == RelockConfig.Topology.CLUSTER;
    }

    /**
     * Connects both clients.
     *
     * @throws RelockConnectionException if Redis cannot be reached or refuses the login
     */
    static Session open(RelockConfig config) {
        Relock relock = Relock.create(config);
        ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1)
                .build();
        AbstractRedisClient client = null;
        try {
            if (config.topology() == RelockConfig.Topology.CLUSTER) {
                List<RedisURI> seeds = new ArrayList<>();
                for (String uri : config.serverUris()) {
                    seeds.add(node(uri, config));
                }
                RedisClusterClient clusterClient = RedisClusterClient.create(resources, seeds);
                client = clusterClient;
                clusterClient.setOptions(ClusterClientOptions.builder().sslOptions(ssl(config)).build());
                StatefulRedisClusterConnection<String, String> connection = clusterClient.connect(StringCodec.UTF8);
                return new Session(config, relock, resources, client, connection, connection.sync());
            }
            RedisClient redisClient = RedisClient.create(resources, dataUri(config));
            client = redisClient;
            redisClient.setOptions(ClientOptions.builder().sslOptions(ssl(config)).build());
            StatefulRedisConnection<String, String> connection = redisClient.connect(StringCodec.UTF8);
            return new Session(config, relock, resources, client, connection, connection.sync());
        } catch (RedisException e) {
            relock.close();
            if (client != null) {
                client.shutdown(0, 0, TimeUnit.MILLISECONDS);
            }
            resources.shutdown(0, 0, TimeUnit.MILLISECONDS);
            throw new RelockConnectionException("cannot open a second connection to " + redacted(config)
                    + " for reading the lock data", e);
        }
    }

    /** The Relock client. */
    Relock relock() {
        return relock;
    }

    /** Synchronous commands on the data nodes (routed by slot in a cluster; SCAN visits every master). */
    RedisClusterCommands<String, String> commands() {
        return commands;
    }

    /** Whether the Redis is a cluster. */
    boolean cluster() {
        return cluster;
    }

    /** The configured key prefix, empty for none. */
    String keyPrefix() {
        return config.keyPrefix();
    }

    /** Where the locks live, without credentials, for messages. */
    static String redacted(RelockConfig config) {
        List<String> uris = config.serverUris().stream().map(Session::redact).toList();
        return switch (config.topology()) {
            case SENTINEL -> "Sentinel master '" + config.masterName() + "' via " + uris;
            case CLUSTER -> "cluster " + uris;
            default -> String.join(", ", uris);
        };
    }

    private static String redact(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        return scheme >= 0 && at > scheme ? uri.substring(0, scheme + 3) + "***" + uri.substring(at) : uri;
    }

    private static boolean hasCredentials(String uri) {
        int scheme = uri.indexOf("://");
        return scheme >= 0 && uri.lastIndexOf('@') > scheme;
    }

    /** A data node's URI, with the configured credentials when it carries none. */
    private static RedisURI node(String text, RelockConfig config) {
        RedisURI uri = RedisURI.create(text);
        if (config.password() != null && !hasCredentials(text)) {
            uri.setCredentialsProvider(new StaticCredentialsProvider(config.username(), config.password()));
        }
        uri.setTimeout(config.commandTimeout());
        return uri;
    }

    /** The single server's or the Sentinel master's URI, as relock-core builds it. */
    private static RedisURI dataUri(RelockConfig config) {
        if (config.topology() != RelockConfig.Topology.SENTINEL) {
            RedisURI uri = node(config.serverUris().get(0), config);
            uri.setDatabase(config.database());
            return uri;
        }
        RedisURI.Builder builder = RedisURI.builder().withSentinelMasterId(config.masterName());
        boolean tls = true;
        for (String text : config.serverUris()) {
            RedisURI sentinel = RedisURI.create(text);
            tls &= sentinel.isSsl();
            builder.withSentinel(sentinel);
        }
        RedisURI uri = builder.withSsl(tls).withDatabase(config.database()).withTimeout(config.commandTimeout())
                .build();
        if (config.password() != null) {
            uri.setCredentialsProvider(new StaticCredentialsProvider(config.username(), config.password()));
        }
        return uri;
    }

    private static SslOptions ssl(RelockConfig config) {
        SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
        if (config.trustedCertificates() != null) {
            ssl.trustManager(config.trustedCertificates().toFile());
        }
        return ssl.build();
    }

    @Override
    public void close() {
        try {
            connection.close();
            client.shutdown(0, 1, TimeUnit.SECONDS);
            relock.close();
        } finally {
            resources.shutdown(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
    }
}
