package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Owners are thread ids, so virtual threads are owners like any other. Runs on JDK 21+ (the
 * build targets 17, so the virtual-thread executor is looked up reflectively); skipped on 17.
 */
class VirtualThreadTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void manyVirtualThreadsShareOneClientWithoutOverlap(RedisServer server) throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        ExecutorService executor = (ExecutorService) java.util.concurrent.Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try (Clients clients = new Clients(server)) {
            DistributedLock lock = clients.create().getLock("virtual");
            AtomicBoolean inside = new AtomicBoolean();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger entries = new AtomicInteger();
            List<Future<?>> tasks = new ArrayList<>();
            int threads = 200;
            for (int i = 0; i < threads; i++) {
                tasks.add(executor.submit(() -> {
                    lock.lock();
                    try {
                        assertThat(lock.isHeldByCurrentThread()).isTrue();
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        entries.incrementAndGet();
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                    return null;
                }));
            }
            for (Future<?> task : tasks) {
                task.get(60, TimeUnit.SECONDS);
            }
            assertThat(overlaps.get()).isZero();
            assertThat(entries.get()).isEqualTo(threads);
        } finally {
            executor.shutdownNow();
        }
    }
}
