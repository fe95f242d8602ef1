package io.relock.internal;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.relock.RelockConfig;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client's two connections to Redis: one for commands, one for pub/sub. Lettuce does the
 * reconnecting; commands issued while disconnected wait for the reconnect up to the command
 * timeout. Scripts run with EVALSHA and fall back to EVAL (which caches them again) when the
 * server answers NOSCRIPT, e.g. after a restart.
 */
public final class RedisGateway implements AutoCloseable {

    /** Connecting (TCP and handshake) may take at least this long, whatever the command timeout. */
    static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final RedisAsyncCommands<String, String> commands;
    private final String target;

    private RedisGateway(RedisClient client, StatefulRedisConnection<String, String> connection,
            StatefulRedisPubSubConnection<String, String> pubSub, String target) {
        this.client = client;
        this.connection = connection;
        this.pubSub = pubSub;
        this.commands = connection.async();
        this.target = target;
    }

    /**
     * Connects both connections and loads every script.
     *
     * @throws io.relock.RelockConnectionException if Redis is unreachable or refuses the credentials
     */
    public static RedisGateway connect(RelockConfig config, ClientResources resources, String clientId) {
        String uriText = config.serverUris().get(0);
        RedisURI uri = RedisUris.parse(uriText, "singleServer");
        // The handshake (HELLO, CLIENT SETNAME) of a cold JVM can take longer than a tight command
        // timeout; commands keep the command timeout through TimeoutOptions below.
        Duration connectTimeout = max(config.commandTimeout(), MIN_CONNECT_TIMEOUT);
        uri.setTimeout(connectTimeout);
        uri.setClientName("relock:" + clientId);
        String target = RedisUris.redact(uriText);

        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
                .build());
        StatefulRedisConnection<String, String> connection = null;
        try {
            connection = client.connect(StringCodec.UTF8);
            StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub(StringCodec.UTF8);
            RedisGateway gateway = new RedisGateway(client, connection, pubSub, target);
            gateway.loadScripts();
            return gateway;
        } catch (RuntimeException e) {
            if (connection != null) {
                connection.close();
            }
            client.shutdown(0, 0, TimeUnit.MILLISECONDS);
            throw Exceptions.cannotConnect(target, e);
        }
    }

    private void loadScripts() {
        for (Script script : Script.values()) {
            String sha = connection.sync().scriptLoad(script.source());
            if (!script.sha().equals(sha)) {
                throw new IllegalStateException("Redis computed SHA " + sha + " for " + script + ", expected "
                        + script.sha());
            }
        }
    }

    /** Runs a script; a null reply completes with null. */
    public <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, String[] keys, String... args) {
        CompletableFuture<T> bySha = commands.<T>evalsha(script.sha(), type, keys, args).toCompletableFuture();
        return bySha.exceptionallyCompose(error -> {
            if (Exceptions.unwrap(error) instanceof RedisNoScriptException) {
                return commands.<T>eval(script.source(), type, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(Exceptions.unwrap(error));
        });
    }

    /** The command connection, for plain commands. */
    public RedisAsyncCommands<String, String> commands() {
        return commands;
    }

    /** The pub/sub connection. */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return pubSub;
    }

    /** Where the client connects, without credentials. */
    public String target() {
        return target;
    }

    @Override
    public void close() {
        pubSub.close();
        connection.close();
        client.shutdown(0, 0, TimeUnit.MILLISECONDS);
    }
}
