package io.relock.demo;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The Redis one demo run works on, and everything the run creates there.
 *
 * <p>Each run has a random id; every key it writes starts with {@code relock-demo:<id>:}
 * ({@link #keyPrefix()}), or with <code>{relock-demo:&lt;id&gt;:</code> for a lock's auxiliary
 * keys: lock keys get the prefix through {@link RelockConfig.Builder#keyPrefix}, and through
 * {@code relock.key-prefix} in the recharge scenarios' Spring applications. So running the demo
 * against a shared Redis touches nothing else, and {@link #deleteRunKeys()} removes exactly what
 * the run wrote.
 *
 * <p>{@link #close()} closes every Relock client made by {@link #newClient} that is still open,
 * and the Lettuce connection.
 */
final class DemoRedis implements AutoCloseable {

    private final String uri;
    private final String runId;
    private final RedisClient lettuce;
    private final StatefulRedisConnection<String, String> connection;
    private final List<Relock> clients = new ArrayList<>();

    private DemoRedis(String uri, String runId, RedisClient lettuce, StatefulRedisConnection<String, String> connection) {
        this.uri = uri;
        this.runId = runId;
        this.lettuce = lettuce;
        this.connection = connection;
    }

    /**
     * Connects to the Redis at {@code uri} and picks a new run id.
     *
     * @throws io.lettuce.core.RedisException if Redis cannot be reached
     */
    static DemoRedis connect(String uri) {
        RedisClient lettuce = RedisClient.create(RedisURI.create(uri));
        try {
            StatefulRedisConnection<String, String> connection = lettuce.connect();
            String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
            return new DemoRedis(uri, runId, lettuce, connection);
        } catch (RuntimeException e) {
            shutdown(lettuce);
            throw e;
        }
    }

    /** The URI of this Redis, as given (with its password, if any: not for printing). */
    String uri() {
        return uri;
    }

    /** The run's random id, eight hex digits. */
    String runId() {
        return runId;
    }

    /** The prefix of every key this run writes: {@code relock-demo:<runId>:}. */
    String keyPrefix() {
        return "relock-demo:" + runId + ":";
    }

    /** The server's version, from {@code INFO server}. */
    String serverVersion() {
        for (String line : commands().info("server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "(unknown version)";
    }

    /** Plain Redis commands, for data that is not a lock. Thread-safe. */
    RedisCommands<String, String> commands() {
        return connection.sync();
    }

    /** A new Relock client with the default watchdog timeout (30 s), closed by {@link #close()}. */
    Relock newClient() {
        return newClient(RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
    }

    /**
     * A new Relock client on this run's key prefix, closed by {@link #close()} if still open.
     *
     * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
     */
    Relock newClient(Duration watchdogTimeout) {
        RelockConfig config = RelockConfig.builder()
                .singleServer(uri)
                .keyPrefix(keyPrefix())
                .watchdogTimeout(watchdogTimeout)
                .build();
        Relock client = Relock.create(config);
        synchronized (clients) {
            clients.add(client);
        }
        return client;
    }

    /**
     * Deletes every key of this run.
     *
     * @return the names of the deleted keys
     */
    List<String> deleteRunKeys() {
        List<String> keys = new ArrayList<>();
        // A lock's auxiliary keys put the prefixed name in a hash tag, {<prefix><name>}:..., so
        // they start with '{' (a fenced lock's token counter, which never expires, is one).
        for (String pattern : List.of(keyPrefix() + "*", "{" + keyPrefix() + "*")) {
            ScanIterator.scan(commands(), ScanArgs.Builder.matches(pattern).limit(100)).forEachRemaining(keys::add);
        }
        if (!keys.isEmpty()) {
            commands().del(keys.toArray(String[]::new));
        }
        return keys;
    }

    @Override
    public void close() {
        List<Relock> open;
        synchronized (clients) {
            open = new ArrayList<>(clients);
            clients.clear();
        }
        for (Relock client : open) {
            client.close();
        }
        connection.close();
        shutdown(lettuce);
    }

    private static void shutdown(RedisClient lettuce) {
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
