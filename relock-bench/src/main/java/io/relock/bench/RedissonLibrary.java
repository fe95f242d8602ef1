package io.relock.bench;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RLockReactive;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import reactor.core.publisher.Mono;

/**
 * Redisson as its users configure it: {@code useSingleServer().setAddress(uri)} and nothing
 * else (its lock watchdog timeout defaults to 30 s, like Relock's), except the watchdog timeout
 * where a scenario asks for one.
 */
final class RedissonLibrary implements LockLibrary {

    /**
     * The owner ids of reactive holds (S7), one per subscription. Redisson keys a hold by its
     * client's id and this number, so the numbers need only differ within the JVM.
     */
    private static final AtomicLong PIPELINE_OWNERS = new AtomicLong();

    private final RedissonClient redisson;
    private RedissonReactiveClient reactive; // made on first use, so that no other scenario pays for it

    RedissonLibrary(String uri, Duration watchdogTimeout) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        if (watchdogTimeout != null) {
            config.setLockWatchdogTimeout(watchdogTimeout.toMillis());
        }
        redisson = Redisson.create(config);
    }

    @Override
    public Lock lock(String name) {
        return redisson.getLock(name);
    }

    @Override
    public Optional<Lock> fairLock(String name) {
        return Optional.of(redisson.getFairLock(name));
    }

    @Override
    public Optional<Lock> writeLock(String name) {
        return Optional.of(redisson.getReadWriteLock(name).writeLock());
    }

    /** Redisson's RedLock class is deprecated (in favour of a plain RLock) but still ships and works. */
    @Override
    @SuppressWarnings("deprecation")
    public Optional<Lock> redLock(String name, List<LockLibrary> masters) {
        RLock[] locks = new RLock[masters.size()];
        for (int i = 0; i < locks.length; i++) {
            locks[i] = ((RedissonLibrary) masters.get(i)).redisson.getLock(name);
        }
        return Optional.of(new RedissonRedLock(locks));
    }

    /**
     * Redisson's {@link RLockReactive} ({@code redisson.reactive().getLock(name)}): the owner is a
     * number passed by hand to {@code lock(threadId)} and {@code unlock(threadId)}, as Redisson's
     * documentation shows for reactive code, here a new one per subscription; {@code Mono.usingWhen}
     * releases on completion, error and cancel.
     */
    @Override
    public Optional<PipelineLock> pipelineLock(String name) {
        if (reactive == null) {
            reactive = redisson.reactive();
        }
        RLockReactive lock = reactive.getLock(name);
        return Optional.of(new PipelineLock() {
            @Override
            public <T> Mono<T> withLock(Mono<T> work) {
                return Mono.defer(() -> {
                    long owner = PIPELINE_OWNERS.incrementAndGet();
                    return Mono.usingWhen(lock.lock(owner).thenReturn(owner), held -> work, held -> lock.unlock(held));
                });
            }
        });
    }

    /** Redisson's open-source edition has no Micrometer metrics of its locks. */
    @Override
    public Optional<AutoCloseable> bindMetrics(MeterRegistry registry) {
        return Optional.empty();
    }

    @Override
    public boolean renewsLeases() {
        return true;
    }

    @Override
    public void close() {
        // No quiet period: nothing is in flight when a scenario closes its clients.
        redisson.shutdown(0, 5, TimeUnit.SECONDS);
    }
}
