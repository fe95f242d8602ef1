package io.relock.internal;

import io.relock.ClientInfo;
import io.relock.internal.redis.RedisGateway;
import io.relock.internal.support.Exceptions;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's entry on Redis, {@code <prefix>relock:client:<clientId>}: a hash naming the host,
 * process, start time and version, so that whoever inspects a lock can tell where its holder
 * runs. Written at start, kept alive by the watchdog's ticks (it expires a watchdog timeout after
 * the process stops) and deleted at close. Plain idempotent commands, never scripts, so lock
 * scripts and their counts are untouched; a failure only costs the description, never a lock.
 */
final class ClientRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(ClientRegistry.class);

    /** The key of a client's entry, after the key prefix. */
    static final String KEY_INFIX = "relock:client:";

    private static final String HOST = "host";
    private static final String PID = "pid";
    private static final String STARTED = "started";
    private static final String VERSION = "version";

    private static final String THIS_HOST = hostName();
    private static final long THIS_PID = pid();
    private static final String THIS_VERSION = version();

    private final RedisGateway gateway;
    private final String keyPrefix;
    private final String key;
    private final long ttlMillis;
    private final Map<String, String> fields;
    private volatile boolean warned;

    ClientRegistry(RedisGateway gateway, String keyPrefix, String clientId, long ttlMillis) {
        this.gateway = gateway;
        this.keyPrefix = keyPrefix;
        this.key = keyPrefix + KEY_INFIX + clientId;
        this.ttlMillis = ttlMillis;
        Map<String, String> own = new LinkedHashMap<>();
        own.put(HOST, THIS_HOST);
        own.put(PID, Long.toString(THIS_PID));
        own.put(STARTED, Long.toString(System.currentTimeMillis()));
        own.put(VERSION, THIS_VERSION);
        this.fields = Map.copyOf(own);
    }

    /** This JVM's own description, as written. */
    ClientInfo self(String clientId) {
        return describe(clientId, fields);
    }

    /** Writes the entry with its expiry; run at start and whenever a refresh finds it gone. */
    CompletableFuture<Void> register() {
        return gateway.putHash(key, fields, ttlMillis).whenComplete((ignored, error) -> reportFailure(error));
    }

    /** Extends the entry's life by a watchdog timeout; writes it again if Redis lost it (a restart). */
    void refresh() {
        gateway.expire(key, ttlMillis).whenComplete((extended, error) -> {
            if (error != null) {
                reportFailure(error);
            } else if (!extended) {
                register();
            }
        });
    }

    /** Removes the entry; waited for at close, bounded by the command timeout. */
    CompletableFuture<Long> deregister() {
        return gateway.delete(key);
    }

    /** The entries of {@code clientIds} that exist, read together. */
    CompletableFuture<Map<String, ClientInfo>> lookUp(Collection<String> clientIds) {
        Map<String, CompletableFuture<Map<String, String>>> reads = new LinkedHashMap<>();
        for (String clientId : clientIds) {
            reads.put(clientId, gateway.hash(keyPrefix + KEY_INFIX + clientId));
        }
        return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(done -> {
            Map<String, ClientInfo> found = new HashMap<>();
            reads.forEach((clientId, read) -> {
                Map<String, String> entry = read.join();
                if (entry != null && entry.containsKey(HOST)) {
                    found.put(clientId, describe(clientId, entry));
                }
            });
            return found;
        });
    }

    /** This process as a client started at {@code startedAt} describes itself, without any registry. */
    static ClientInfo thisProcess(String clientId, Instant startedAt) {
        return new ClientInfo(clientId, THIS_HOST, THIS_PID, startedAt, THIS_VERSION);
    }

    private static ClientInfo describe(String clientId, Map<String, String> entry) {
        return new ClientInfo(clientId, entry.getOrDefault(HOST, "unknown"), parse(entry.get(PID), -1),
                Instant.ofEpochMilli(parse(entry.get(STARTED), 0)), entry.getOrDefault(VERSION, "unknown"));
    }

    private static long parse(String number, long otherwise) {
        try {
            return number == null ? otherwise : Long.parseLong(number);
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    private void reportFailure(Throwable error) {
        if (error == null) {
            return;
        }
        // Once per client at WARN: an ACL without hset/pexpire on the key would repeat every tick.
        if (!warned) {
            warned = true;
            LOG.warn("could not register this client's host and process on Redis under '{}' ({}); lock "
                    + "inspectors will not show where its holders run", key, Exceptions.unwrap(error).toString());
        } else {
            LOG.debug("client registry refresh of '{}' failed: {}", key, Exceptions.unwrap(error).toString());
        }
    }

    private static String hostName() {
        // The environment first: resolving the local host may wait on DNS.
        String fromEnvironment = System.getenv("HOSTNAME");
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return fromEnvironment;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException | SecurityException e) {
            return "unknown";
        }
    }

    private static long pid() {
        try {
            return ProcessHandle.current().pid();
        } catch (UnsupportedOperationException | SecurityException e) {
            return -1;
        }
    }

    private static String version() {
        try (InputStream in = ClientRegistry.class.getResourceAsStream("relock-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "unknown");
            return version.startsWith("${") ? "unknown" : version;
        } catch (IOException e) {
            return "unknown";
        }
    }
}
