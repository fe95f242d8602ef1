package com.example.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.relock.Relock;
import io.relock.RelockConfig;
// tag::micrometer-imports[]
import io.relock.micrometer.RelockMetrics;
import io.relock.micrometer.RelockObservations;
// end::micrometer-imports[]
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The relock-micrometer code of docs/operations.md, compiled from the same text, around one lock cycle. */
class MetricsTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void theReadmeMetricsAndObservationsRecordALockCycle(RedisServer server) {
        SimpleMeterRegistry meterRegistry = new SimpleMeterRegistry();
        ObservationRegistry observationRegistry = ObservationRegistry.create();
        List<String> observed = new CopyOnWriteArrayList<>();
        observationRegistry.observationConfig().observationHandler(new ObservationHandler<Observation.Context>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                observed.add(context.getName());
            }
        });
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            // tag::micrometer-code[]
            RelockMetrics metrics = new RelockMetrics(relock);       // at most 100 lock names, then lock=_other
            metrics.bindTo(meterRegistry);                           // several registries may be bound
            RelockObservations observations = new RelockObservations(relock, observationRegistry);
            // end::micrometer-code[]

            relock.getLock("order:42").withLock(() -> { });

            assertThat(meterRegistry.get("relock.lock.hold").tag("lock", "order:42").timer().count()).isEqualTo(1);
            assertThat(observed).containsExactly("relock.lock.acquire");

            // tag::micrometer-shutdown[]
            // ... on shutdown, before relock.close():
            observations.close(); metrics.close();
            // end::micrometer-shutdown[]
        }
    }
}
