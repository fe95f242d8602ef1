package com.example.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

// tag::quickstart-imports[]
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
// end::quickstart-imports[]
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's Quick start code, compiled from the same text (the tagged regions) and run against
 * a Redis server that relock-testkit starts. The README's configuration names 127.0.0.1:6379; the
 * test builds it, and runs the rest against the testkit server's port.
 */
class QuickStartTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    /** Whether another client saw order:42 locked at each chargeOrder call. */
    private final List<Boolean> lockedWhileCharging = new ArrayList<>();
    private Relock otherClient;

    static RelockConfig readmeConfig() {
        // tag::quickstart-config[]
        RelockConfig config = RelockConfig.builder()
            .singleServer("redis://127.0.0.1:6379")
            .build();
        // end::quickstart-config[]
        return config;
    }

    void quickStart(RelockConfig config) {
        // tag::quickstart-code[]
        try (Relock relock = Relock.create(config)) {          // one per application, thread-safe
            DistributedLock lock = relock.getLock("order:42");
            lock.lock();                                        // waits; the watchdog renews the lease
            try {
                chargeOrder(42);                                // one thread in the whole fleet at a time
            } finally {
                lock.unlock();
            }
            lock.withLock(() -> chargeOrder(42));               // the same, in one call
        }
        // end::quickstart-code[]
    }

    void chargeOrder(int orderId) {
        lockedWhileCharging.add(otherClient.getLock("order:" + orderId).isLocked());
    }

    @Test
    void theQuickStartHoldsOrder42WhileItChargesAndReleasesItAfterwards(RedisServer server) {
        RelockConfig config = RelockConfig.builder().singleServer(server.uri()).build();
        try (Relock other = Relock.create(config)) {
            otherClient = other;

            quickStart(config);

            assertThat(lockedWhileCharging).containsExactly(true, true);
            assertThat(other.getLock("order:42").isLocked()).isFalse();
        }
    }

    @Test
    void theQuickStartConfigurationNamesTheLocalDefaultServer() {
        assertThat(readmeConfig().serverUris()).containsExactly("redis://127.0.0.1:6379");
    }
}
