package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The registry bean from docs/migrating-from-spring-integration.md, in a Spring context, locks the
 * key RedisLockRegistry would.
 */
class LockConfigTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void theRegistryBeanLocksUnderTheRegistryKey(RedisServer server) throws Exception {
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
                AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean(Relock.class, () -> relock);
            context.register(LockConfig.class);
            context.refresh();
            LockRegistry<?> registry = context.getBean(LockRegistry.class);

            Lock lock = registry.obtain("order-42");
            assertThat(lock.tryLock()).isTrue();
            try {
                assertThat(relock.getLock("my-app:order-42").isLocked()).isTrue();
            } finally {
                lock.unlock();
            }
            Boolean lockedInside = registry.executeLocked("order-42", () -> relock.getLock("my-app:order-42").isLocked());
            assertThat(lockedInside).isTrue();
        }
    }
}
