package io.relock.spring.boot;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import io.relock.Relock;
import io.relock.RelockConfig;

/**
 * The one place where {@code relock.require-redis-at-startup=false} meets relock-core: the
 * builder option that makes {@link Relock#create(RelockConfig)} return while Redis is
 * unreachable (the client connects in the background, and its calls fail with
 * {@link io.relock.RelockConnectionException} until it is connected), and the question whether
 * the client is connected now, which the health indicator asks before its probe.
 *
 * <p>PENDING relock-core: this version of core has neither. Until it has, the property set to
 * false fails the start naming itself (rather than being ignored), and {@link #connected}
 * answers true so that the health indicator's probe alone decides, as before. When core has
 * them, {@link #apply} calls the builder option and {@link #connected} the client's
 * connection state; nothing else changes.
 */
final class StartWithoutRedis {

    private StartWithoutRedis() {}

    /**
     * Lets {@link Relock#create(RelockConfig)} return while Redis is unreachable.
     *
     * @throws InvalidConfigurationPropertyValueException while relock-core has no such option
     */
    static void apply(RelockConfig.Builder builder) {
        throw new InvalidConfigurationPropertyValueException(RelockProperties.REQUIRE_REDIS_AT_STARTUP, false,
                "this version of relock-core cannot start a client without Redis; leave the property unset");
    }

    /** Whether the client is connected to Redis now; true when core cannot tell (the probe decides). */
    static boolean connected(Relock relock) {
        return true;
    }
}
