package io.relock.internal.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import io.relock.internal.support.Exceptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Opens the connections of one topology into a {@link Connected}; Lettuce does the topology
 * work behind them (finding the master through Sentinel, routing by slot and following redirects
 * in a cluster, reconnecting). What every topology shares lives here: the client options (at
 * most once, timeouts, TLS), the credentials, the data nodes' URIs and the handshake.
 */
abstract sealed class Connector
        permits StandaloneConnector, SentinelConnector, MasterReplicaConnector, ClusterConnector {

    /** Connecting (TCP and handshake) may take at least this long, whatever the command timeout. */
    static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** Attempts at a connection whose handshake ended in "Connection closed prematurely"; see handshake(). */
    private static final int HANDSHAKE_ATTEMPTS = 3;

    final RelockConfig config;
    final ClientResources resources;
    final String clientId;

    Connector(RelockConfig config, ClientResources resources, String clientId) {
        this.config = config;
        this.resources = resources;
        this.clientId = clientId;
    }

    /** The connector of the configured topology; {@code nanoTime} is the client's clock. */
    static Connector of(RelockConfig config, ClientResources resources, String clientId, LongSupplier nanoTime) {
        return switch (config.topology()) {
            case SINGLE_SERVER -> new StandaloneConnector(config, resources, clientId);
            case SENTINEL -> new SentinelConnector(config, resources, clientId);
            case MASTER_REPLICA -> new MasterReplicaConnector(config, resources, clientId);
            case CLUSTER -> new ClusterConnector(config, resources, clientId, nanoTime);
        };
    }

    /** Connects, leaving in {@code out} whatever it opened, also when it fails part-way. */
    abstract void connect(Connected out);

    /** One command and one pub/sub connection to where {@code client}'s URI points. */
    final void connectTo(RedisClient client, Connected out) {
        client.setOptions(options(ClientOptions.builder()).build());
        out.client = client;
        StatefulRedisConnection<String, String> connection = handshake(() -> client.connect(StringCodec.UTF8));
        out.connection = connection;
        out.commands = connection.async();
        out.pubSub = handshake(() -> client.connectPubSub(StringCodec.UTF8));
    }

    final Duration connectTimeout() {
        // The handshake (HELLO, CLIENT SETNAME) of a cold JVM can take longer than a tight command
        // timeout; commands keep the command timeout through the timeout options.
        Duration timeout = config.commandTimeout();
        return timeout.compareTo(MIN_CONNECT_TIMEOUT) >= 0 ? timeout : MIN_CONNECT_TIMEOUT;
    }

    private TimeoutOptions timeouts() {
        long commandNanos = config.commandTimeout().toNanos();
        // WAIT blocks on the server for up to the replica-sync timeout by design.
        long waitNanos = commandNanos + config.replicaSyncTimeout().toNanos();
        return TimeoutOptions.builder().timeoutSource(new TimeoutOptions.TimeoutSource() {
            @Override
            public long getTimeout(RedisCommand<?, ?, ?> command) {
                return command.getType() == CommandType.WAIT ? waitNanos : commandNanos;
            }

            @Override
            public TimeUnit getTimeUnit() {
                return TimeUnit.NANOSECONDS;
            }
        }).build();
    }

    final <B extends ClientOptions.Builder> B options(B builder) {
        builder.autoReconnect(true)
                // At most once: a command in flight when its connection breaks fails instead of
                // being re-sent after the reconnect, and a command issued while disconnected fails
                // at once; the gateway's own retries re-run scripts knowing they may have run.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(timeouts())
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout()).build());
        if (config.trustedCertificates() != null || config.trustManagerFactory() != null
                || config.keyManagerFactory() != null) {
            SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
            if (config.trustedCertificates() != null) {
                ssl.trustManager(config.trustedCertificates().toFile());
            }
            if (config.trustManagerFactory() != null) {
                ssl.trustManager(config.trustManagerFactory());
            }
            if (config.keyManagerFactory() != null) {
                ssl.keyManager(config.keyManagerFactory());
            }
            builder.sslOptions(ssl.build());
        }
        return builder;
    }

    /**
     * The configured user and password. A credentials provider, not {@code setAuthentication}: that
     * method is Lettuce 7's, and Spring Boot 4.0 applications run Relock on Lettuce 6.8.
     */
    final StaticCredentialsProvider credentials() {
        return new StaticCredentialsProvider(config.username(), config.password());
    }

    /** Every configured URI as a data node; {@code setting} names them in messages. */
    final List<RedisURI> dataNodes(String setting) {
        List<RedisURI> nodes = new ArrayList<>();
        for (String text : config.serverUris()) {
            nodes.add(dataNode(text, setting));
        }
        return nodes;
    }

    /** Parses a data node's URI, with the configured credentials when it carries none. */
    final RedisURI dataNode(String text, String setting) {
        RedisURI uri = RedisUris.parse(text, setting).uri();
        if (config.topology() != RelockConfig.Topology.CLUSTER) {
            uri.setDatabase(config.database());
        }
        char[] password = config.password();
        if (password != null && !RedisUris.hasCredentials(text)) {
            uri.setCredentialsProvider(credentials());
        }
        uri.setTimeout(connectTimeout());
        uri.setClientName("relock:" + clientId);
        return uri;
    }

    /**
     * Connects, and again (up to {@link #HANDSHAKE_ATTEMPTS} in all) when the server's answer was
     * lost in a race. When a handshake command fails (a wrong password, too many clients),
     * Lettuce closes the channel and reports the server's answer only once the close is done;
     * the closed channel can report itself first ("Connection closed prematurely"). Seen about
     * once in ten loaded runs of the wrong-password test. And when the peer speaks or closes
     * before Lettuce set up its handshake (another service on the port), the handshake handler
     * can be gone when the connect completes ("RedisHandshakeHandler not registered", about once
     * in 55 tries). A further attempt usually gets the server's answer; if the race repeats, the
     * failure reports the handshake that never began (see {@link Exceptions#cannotConnect}).
     */
    static <T> T handshake(Supplier<T> connect) {
        for (int attempt = 1;; attempt++) {
            try {
                return connect.get();
            } catch (RedisConnectionException e) {
                if (attempt == HANDSHAKE_ATTEMPTS || !(closedPrematurely(e) || Exceptions.handshakeHandlerGone(e))) {
                    throw e;
                }
            }
        }
    }

    private static boolean closedPrematurely(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if ("Connection closed prematurely".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }
}
