package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.micrometer.RelockMetrics;
import io.relock.micrometer.RelockObservations;
import io.relock.testkit.RedisExtension;

/**
 * relock-micrometer in a Spring Boot application with Actuator: meters bound to Boot's
 * registry, scraped by Prometheus under the expected names, the lock-name cap from
 * {@code relock.metrics.max-lock-names}, an observation per acquire, and off when disabled.
 */
class RelockMetricsAutoConfigurationTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void metersAreBoundAndPrometheusScrapesThemUnderTheirNames() {
        try (ActuatorApp app = ActuatorApp.start(redis.server(),
                "management.endpoints.web.exposure.include=locks,health,prometheus")) {
            DistributedLock lock = app.bean(Relock.class).getLock("order:42");
            lock.lock();
            lock.unlock();
            assertThat(app.bean(RelockMetrics.class)).isNotNull();
            Timer waits = app.bean(MeterRegistry.class).find("relock.lock.wait")
                    .tags("lock", "order:42", "type", "reentrant", "outcome", "acquired").timer();
            assertThat(waits).isNotNull();
            assertThat(waits.count()).isEqualTo(1);

            ActuatorApp.Response scrape = app.get("/actuator/prometheus");
            assertThat(scrape.status()).isEqualTo(200);
            assertThat(scrape.body())
                    .contains("relock_lock_wait_seconds_count{lock=\"order:42\",outcome=\"acquired\",type=\"reentrant\"} 1")
                    .contains("relock_lock_hold_seconds_count{lock=\"order:42\",outcome=\"released\",type=\"reentrant\"} 1")
                    .contains("relock_lock_active_seconds_count{lock=\"order:42\",type=\"reentrant\"} 0");
        }
    }

    @Test
    void theLockNameCapComesFromTheProperties() {
        try (ActuatorApp app = ActuatorApp.start(redis.server(), "relock.metrics.max-lock-names=2")) {
            Relock relock = app.bean(Relock.class);
            for (String name : List.of("a", "b", "c", "d")) {
                DistributedLock lock = relock.getLock(name);
                lock.lock();
                lock.unlock();
            }
            MeterRegistry registry = app.bean(MeterRegistry.class);
            List<String> names = registry.find("relock.lock.wait").timers().stream()
                    .map(timer -> timer.getId().getTag("lock")).sorted().toList();
            assertThat(names).containsExactly("_other", "a", "b");
            assertThat(registry.find("relock.lock.wait").tag("lock", "_other").timer().count()).isEqualTo(2);
        }
    }

    @Test
    void everyAcquireIsObservedWhenTheApplicationObserves() {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ObservingApp.class)
                .properties("spring.data.redis.url=" + redis.server().uri(), "spring.main.web-application-type=none",
                        "spring.main.banner-mode=off", "spring.datasource.url=jdbc:h2:mem:observing")
                .run();
        try {
            assertThat(context.getBean(RelockObservations.class)).isNotNull();
            DistributedLock lock = context.getBean(Relock.class).getLock("traced");
            lock.lock();
            lock.unlock();
            Recording recording = context.getBean(Recording.class);
            assertThat(recording.stopped()).containsExactly("relock.lock.acquire");
        } finally {
            context.close();
        }
    }

    @Test
    void nothingIsBoundWhenMetricsAreDisabled() {
        try (ActuatorApp app = ActuatorApp.start(redis.server(), "relock.metrics.enabled=false")) {
            DistributedLock lock = app.bean(Relock.class).getLock("unmetered");
            lock.lock();
            lock.unlock();
            assertThat(app.context.getBeanNamesForType(RelockMetrics.class)).isEmpty();
            assertThat(app.bean(MeterRegistry.class).find("relock.lock.wait").timers()).isEmpty();
        }
    }

    /** Keeps the names of the observations that stopped. */
    static final class Recording implements ObservationHandler<Observation.Context> {

        private final List<String> stopped = new ArrayList<>();

        @Override
        public synchronized void onStop(Observation.Context context) {
            if (context.getName().startsWith("relock.")) {
                stopped.add(context.getName());
            }
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        synchronized List<String> stopped() {
            return List.copyOf(stopped);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ObservingApp {

        @Bean
        Recording recording() {
            return new Recording();
        }
    }
}
