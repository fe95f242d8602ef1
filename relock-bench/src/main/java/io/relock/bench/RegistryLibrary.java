package io.relock.bench;

import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * Spring Integration's {@link RedisLockRegistry} as a Spring application has it: one registry on
 * its own {@link LettuceConnectionFactory} (Spring Data Redis, standalone server, the factory's
 * defaults: one shared native connection, its own Lettuce client resources) per client,
 * {@link RedisLockType#PUB_SUB_LOCK} (waiters wait for an unlock message rather than polling
 * every 100 ms), and otherwise its defaults.
 *
 * <p>Those defaults differ from the other libraries' in ways the reader should know: a lock is
 * a Redis string with a fixed lease of 60 s ({@code expireAfter}), renewed only when a renewal
 * {@code TaskScheduler} is set (so there is no watchdog, and S5's watchdog case does not apply);
 * threads of one registry queue on a local {@code ReentrantLock} per name before one of them
 * talks to Redis; {@code unlock()} runs its script on the registry's executor thread. All
 * clients share the registry key {@value #REGISTRY_KEY}, so they contend for the same names.
 */
final class RegistryLibrary implements LockLibrary {

    /** The registry key of every client: a lock {@code name} is the Redis key {@code bench:name}. */
    static final String REGISTRY_KEY = "bench";

    private final LettuceConnectionFactory connections;
    private final RedisLockRegistry registry;

    /** Connects; {@code watchdogTimeout} is ignored, as the registry has no watchdog. */
    RegistryLibrary(String uri, Duration watchdogTimeout) {
        URI parsed = URI.create(uri);
        connections = new LettuceConnectionFactory(new RedisStandaloneConfiguration(parsed.getHost(), parsed.getPort()));
        // As a Spring context would: initialise, then start (which connects).
        connections.afterPropertiesSet();
        connections.start();
        registry = new RedisLockRegistry(connections, REGISTRY_KEY);
        registry.setRedisLockType(RedisLockType.PUB_SUB_LOCK);
    }

    @Override
    public Lock lock(String name) {
        return registry.obtain(name);
    }

    /** Spring Integration has no fair lock. */
    @Override
    public Optional<Lock> fairLock(String name) {
        return Optional.empty();
    }

    /** The registry's locks are exclusive only: no read-write lock. */
    @Override
    public Optional<Lock> writeLock(String name) {
        return Optional.empty();
    }

    /** Spring Integration has no RedLock. */
    @Override
    public Optional<Lock> redLock(String name, List<LockLibrary> masters) {
        return Optional.empty();
    }

    /**
     * The registry has no reactive lock: its locks are {@code java.util.concurrent.locks.Lock}s
     * held by the thread that called {@code lock()}.
     */
    @Override
    public Optional<PipelineLock> pipelineLock(String name) {
        return Optional.empty();
    }

    /** The registry has no Micrometer metrics of its locks. */
    @Override
    public Optional<AutoCloseable> bindMetrics(MeterRegistry registry) {
        return Optional.empty();
    }

    /** A held lock keeps its fixed lease (60 s): no renewal scheduler is set by default. */
    @Override
    public boolean renewsLeases() {
        return false;
    }

    @Override
    public void close() {
        try {
            registry.destroy();
        } finally {
            connections.destroy();
        }
    }
}
