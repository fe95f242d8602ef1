package io.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * Why a fleet must not mix {@code RedisLockRegistry} and Relock on one lock key: they store a
 * lock differently (a string against a hash) and do not wait for each other. On the same Redis
 * key the second to come fails with Redis's WRONGTYPE error while the other holds it; on
 * different keys (a key prefix, another registry key) both hold the lock at once.
 */
class MixedWithRedisLockRegistryTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private Relock relock;
    private LettuceConnectionFactory connectionFactory;
    private RedisLockRegistry redisLockRegistry;
    private ExecutorService executor;

    @BeforeEach
    void setUp(RedisServer server) {
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        redisLockRegistry = new RedisLockRegistry(connectionFactory, "app");
        executor = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        redisLockRegistry.destroy();
        connectionFactory.destroy();
        relock.close();
    }

    @Test
    void whileRedisLockRegistryHoldsAKeyRelockFailsInsteadOfWaiting() throws Exception {
        Lock theirs = redisLockRegistry.obtain("orders");
        theirs.lock();
        try {
            Lock ours = new RelockLockRegistry(relock, "app").obtain("orders");
            assertThatThrownBy(() -> executor.submit(() -> ours.tryLock(1, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS))
                    .cause().isInstanceOf(RelockException.class).hasMessageContaining("WRONGTYPE");
        } finally {
            theirs.unlock();
        }
    }

    @Test
    void whileRelockHoldsAKeyRedisLockRegistryFailsInsteadOfWaiting() throws Exception {
        Lock ours = new RelockLockRegistry(relock, "app").obtain("orders");
        ours.lock();
        try {
            Lock theirs = redisLockRegistry.obtain("orders");
            assertThatThrownBy(() -> executor.submit(() -> theirs.tryLock(1, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS))
                    .cause().isInstanceOf(CannotAcquireLockException.class)
                    .rootCause().hasMessageContaining("WRONGTYPE");
        } finally {
            ours.unlock();
        }
    }

    @Test
    void withAKeyPrefixOnTheRelockClientBothHoldOneLockKeyAtOnce(RedisServer server) throws Exception {
        try (Relock prefixed = Relock.create(RelockConfig.builder().singleServer(server.uri()).keyPrefix("relock:").build())) {
            Lock ours = new RelockLockRegistry(prefixed, "app").obtain("orders");
            ours.lock();
            try {
                Lock theirs = redisLockRegistry.obtain("orders");
                assertThat(executor.submit(() -> {
                    boolean acquired = theirs.tryLock();
                    if (acquired) {
                        theirs.unlock();
                    }
                    return acquired;
                }).get(30, TimeUnit.SECONDS)).as("no exclusion at all").isTrue();
            } finally {
                ours.unlock();
            }
        }
    }
}
