package io.relock.spring.boot;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.ssl.SslBundle;

import io.relock.RelockConfig;

/** Translates Spring Boot's Redis connection details and the {@code relock.*} properties into a {@link RelockConfig}. */
final class SpringRelockConfig {

    private SpringRelockConfig() {}

    static RelockConfig build(DataRedisConnectionDetails connection, DataRedisProperties redis,
            RelockProperties properties, List<RelockConfigCustomizer> customizers) {
        RelockConfig.Builder builder = RelockConfig.builder();
        SslBundle ssl = connection.getSslBundle();
        boolean tls = ssl != null || (redis != null && redis.getUrl() != null && redis.getUrl().startsWith("rediss:"));
        String scheme = tls ? "rediss" : "redis";
        if (connection.getCluster() != null) {
            builder.cluster(uris(scheme, connection.getCluster().getNodes(), null, null));
        } else if (connection.getSentinel() != null) {
            DataRedisConnectionDetails.Sentinel sentinel = connection.getSentinel();
            builder.sentinel(sentinel.getMaster(),
                    uris(scheme, sentinel.getNodes(), sentinel.getUsername(), sentinel.getPassword()));
            if (sentinel.getDatabase() != 0) {
                builder.database(sentinel.getDatabase());
            }
        } else if (connection.getMasterReplica() != null) {
            builder.masterReplica(uris(scheme, connection.getMasterReplica().getNodes(), null, null));
        } else {
            DataRedisConnectionDetails.Standalone standalone = connection.getStandalone();
            builder.singleServer(uri(scheme, standalone.getHost(), standalone.getPort(), null, null)
                    + (standalone.getDatabase() == 0 ? "" : "/" + standalone.getDatabase()));
        }
        if (connection.getPassword() != null) {
            builder.credentials(connection.getUsername(), connection.getPassword().toCharArray());
        }
        if (ssl != null) {
            builder.trustManagerFactory(ssl.getManagers().getTrustManagerFactory());
            builder.keyManagerFactory(ssl.getManagers().getKeyManagerFactory());
        }
        apply(builder, "relock.key-prefix", properties.getKeyPrefix(), b -> b.keyPrefix(properties.getKeyPrefix()));
        applyCommon(builder, properties, redis == null ? null : redis.getTimeout());
        RelockProperties.ReplicaSync sync = properties.getReplicaSync();
        if (sync.getMinReplicas() < 0) {
            throw new InvalidConfigurationPropertyValueException("relock.replica-sync.min-replicas",
                    sync.getMinReplicas(), "must be 0 (off) or more");
        }
        if (sync.getMinReplicas() > 0) {
            apply(builder, "relock.replica-sync.timeout", sync.getTimeout(),
                    b -> b.replicaSync(sync.getMinReplicas(), sync.getTimeout()));
        }
        if (!properties.isRequireRedisAtStartup()) {
            StartWithoutRedis.apply(builder, connection.getCluster() != null);
        }
        return finish(builder, customizers);
    }

    /**
     * The settings of a client on the database ({@code relock.store=jdbc}): those of the
     * {@code relock.*} properties that are not Redis's, on a builder whose server is
     * {@code placeholder} (never connected to).
     */
    static RelockConfig buildForDatabase(String placeholder, RelockProperties properties,
            List<RelockConfigCustomizer> customizers) {
        RelockConfig.Builder builder = RelockConfig.builder().singleServer(placeholder);
        applyCommon(builder, properties, null);
        return finish(builder, customizers);
    }

    /** The settings both stores read: leases, timeouts, backoff. */
    private static void applyCommon(RelockConfig.Builder builder, RelockProperties properties, Duration redisTimeout) {
        apply(builder, "relock.watchdog-timeout", properties.getWatchdogTimeout(),
                b -> b.watchdogTimeout(properties.getWatchdogTimeout()));
        Duration commandTimeout = properties.getCommandTimeout();
        String commandTimeoutProperty = "relock.command-timeout";
        if (commandTimeout == null && redisTimeout != null) {
            commandTimeout = redisTimeout;
            commandTimeoutProperty = "spring.data.redis.timeout";
        }
        Duration timeout = commandTimeout;
        apply(builder, commandTimeoutProperty, timeout, b -> b.commandTimeout(timeout));
        apply(builder, "relock.thread-wait-time", properties.getThreadWaitTime(),
                b -> b.threadWaitTime(properties.getThreadWaitTime()));
        RelockProperties.SpinBackoff spin = properties.getSpinBackoff();
        if (spin.getInitial() != null || spin.getMax() != null) {
            Duration initial = spin.getInitial() != null ? spin.getInitial() : RelockConfig.DEFAULT_SPIN_BACKOFF_INITIAL;
            Duration max = spin.getMax() != null ? spin.getMax() : RelockConfig.DEFAULT_SPIN_BACKOFF_MAX;
            apply(builder, spin.getInitial() != null ? "relock.spin-backoff.initial" : "relock.spin-backoff.max",
                    spin.getInitial() != null ? spin.getInitial() : spin.getMax(), b -> b.spinBackoff(initial, max));
        }
    }

    private static RelockConfig finish(RelockConfig.Builder builder, List<RelockConfigCustomizer> customizers) {
        // The context closes the client itself, after the beans that lock have stopped; core's own
        // hook would run beside Spring's and release holds under methods still running.
        builder.releaseOnShutdown(false);
        customizers.forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    /**
     * Applies one property, first to a scratch builder so that core's own rule for the value
     * decides, and a refusal names the property instead of the builder method.
     */
    private static void apply(RelockConfig.Builder builder, String property, Object value,
            Consumer<RelockConfig.Builder> setting) {
        if (value == null) {
            return;
        }
        try {
            RelockConfig.Builder scratch = RelockConfig.builder().singleServer("redis://localhost");
            setting.accept(scratch);
            scratch.build();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InvalidConfigurationPropertyValueException(property, value, e.getMessage());
        }
        setting.accept(builder);
    }

    private static String[] uris(String scheme, List<DataRedisConnectionDetails.Node> nodes, String user,
            String password) {
        return nodes.stream().map(node -> uri(scheme, node.host(), node.port(), user, password)).toArray(String[]::new);
    }

    private static String uri(String scheme, String host, int port, String user, String password) {
        String userInfo = password == null ? null : (user == null ? "" : user) + ":" + password;
        try {
            // java.net.URI quotes what the user info needs quoted, and brackets IPv6 hosts.
            return new URI(scheme, userInfo, host, port, null, null, null).toASCIIString();
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("cannot make a Redis URI of host '" + host + "' and port " + port
                    + ": " + e.getReason(), e);
        }
    }
}
