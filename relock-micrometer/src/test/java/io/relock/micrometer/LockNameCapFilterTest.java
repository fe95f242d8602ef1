package io.relock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RelockMetrics#lockNameCap(int)} on a registry, without Redis. */
class LockNameCapFilterTest {

    @Test
    void relockMetersPastTheCapAreReportedAsOtherAndOtherMetersPassUnchanged() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(RelockMetrics.lockNameCap(2));

        for (String name : List.of("a", "b", "c", "d", "a", "_other")) {
            registry.counter("relock.lock.lost", "lock", name, "cause", "expired").increment();
        }
        registry.counter("app.jobs", "lock", "c").increment();
        registry.counter("relock.watchdog.renewals", "outcome", "renewed").increment();

        assertThat(registry.get("relock.lock.lost").counters())
                .extracting(c -> c.getId().getTag("lock") + ":" + (long) c.count())
                .containsExactlyInAnyOrder("a:2", "b:1", "_other:3");
        assertThat(registry.get("app.jobs").counter().getId().getTag("lock")).isEqualTo("c");
        assertThat(registry.get("relock.watchdog.renewals").counter().count()).isEqualTo(1);
    }

    @Test
    void theCapAppliesAcrossRelockMeterNames() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(RelockMetrics.lockNameCap(1));

        registry.timer("relock.lock.acquire", "lock", "first").count();
        Counter second = registry.counter("relock.lock.force.unlocks", "lock", "second");

        assertThat(second.getId().getTag("lock")).isEqualTo("_other");
        assertThat(registry.counter("relock.lock.force.unlocks", "lock", "first").getId().getTag("lock"))
                .isEqualTo("first");
    }
}
