package io.relock.internal.types;

import io.relock.RelockConfig;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.LockClient;
import io.relock.internal.redis.RedisGateway;

/**
 * What the lock types and their drivers need of their client beyond the engine's
 * {@link LockClient}: the whole gateway (their scripts and reads), the client's settings, and
 * how a lock's names are made. {@code ClientRuntime} is the one in production; through this
 * class the types sit below the client's wiring, not beside it.
 */
public abstract class DriverClient extends LockClient {

    @Override
    public abstract RedisGateway gateway();

    /** The client's settings. */
    public abstract RelockConfig config();

    /** The keys of lock {@code name} on this client's servers, announcing on channels named {@code channelPrefix}. */
    public abstract LockKeys keysOf(String name, String channelPrefix);
}
