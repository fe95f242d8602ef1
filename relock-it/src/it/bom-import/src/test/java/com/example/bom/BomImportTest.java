package com.example.bom;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.micrometer.RelockMetrics;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Core, relock-micrometer and relock-testkit, their versions from relock-bom, work together. */
class BomImportTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void modulesWhoseVersionsComeFromTheBomLockAndCountTheHold(RedisServer server) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
                RelockMetrics metrics = new RelockMetrics(relock)) {
            metrics.bindTo(registry);
            DistributedLock lock = relock.getLock("job:nightly");

            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            lock.unlock();

            assertThat(lock.isLocked()).isFalse();
            assertThat(registry.get("relock.lock.hold").tag("lock", "job:nightly").timer().count()).isEqualTo(1);
        }
    }
}
