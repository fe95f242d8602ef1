package io.relock.spring.boot;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import io.relock.Relock;
import io.relock.RelockConfig;

/**
 * The one place where {@code relock.require-redis-at-startup=false} meets relock-core: the
 * builder option that makes {@link Relock#create(RelockConfig)} return while Redis is
 * unreachable ({@link RelockConfig.Builder#connectInBackground(boolean)}: the client connects
 * in the background, and its calls fail with {@link io.relock.RelockConnectionException} until
 * it is connected), and the question whether the client is connected now
 * ({@link Relock#isConnected()}), which the health indicator asks before its probe.
 */
final class StartWithoutRedis {

    private StartWithoutRedis() {}

    /**
     * Lets {@link Relock#create(RelockConfig)} return while Redis is unreachable.
     *
     * @param cluster whether the configuration is a Redis Cluster's, which core cannot start
     *     without seeing its nodes
     * @throws InvalidConfigurationPropertyValueException for a Redis Cluster
     */
    static void apply(RelockConfig.Builder builder, boolean cluster) {
        if (cluster) {
            throw new InvalidConfigurationPropertyValueException(RelockProperties.REQUIRE_REDIS_AT_STARTUP, false,
                    "a Redis Cluster client cannot start without Redis: it must see the cluster's nodes to know"
                            + " where each lock lives; leave the property unset");
        }
        builder.connectInBackground(true);
    }

    /** Whether the client is connected to Redis now, as far as it knows (no round trip). */
    static boolean connected(Relock relock) {
        return relock.isConnected();
    }
}
