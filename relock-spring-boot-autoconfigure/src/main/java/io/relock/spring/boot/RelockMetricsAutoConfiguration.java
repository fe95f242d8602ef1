package io.relock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.Relock;
import io.relock.micrometer.RelockMetrics;
import io.relock.micrometer.RelockObservations;

/**
 * Binds relock-micrometer's meters ({@code relock.lock.wait}, {@code relock.lock.hold}, …) to
 * the application's meter registries when relock-micrometer and Micrometer are on the class
 * path and the application has a {@link MeterRegistry} (Actuator makes one), and observes every acquire (a {@code relock.lock.acquire} span with tracing) when there
 * is an {@link ObservationRegistry}. The lock-name cap is a {@link MeterFilter} bean, which Boot
 * applies before any meter is registered. Off with {@code relock.metrics.enabled=false}.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class,
        afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass({ RelockMetrics.class, MeterRegistry.class })
@ConditionalOnBean({ Relock.class, MeterRegistry.class })
@ConditionalOnProperty(prefix = "relock.metrics", name = "enabled", matchIfMissing = true)
public class RelockMetricsAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockMetricsAutoConfiguration() {}

    private static int maxLockNames(RelockProperties properties) {
        int max = properties.getMetrics().getMaxLockNames();
        if (max < 1) {
            throw new InvalidConfigurationPropertyValueException("relock.metrics.max-lock-names", max,
                    "it must be at least 1");
        }
        return max;
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RelockMetrics relockMetrics(Relock relock, RelockProperties properties) {
        return new RelockMetrics(relock, maxLockNames(properties));
    }

    @Bean
    @ConditionalOnMissingBean(name = "relockLockNameCap")
    MeterFilter relockLockNameCap(RelockProperties properties) {
        return RelockMetrics.lockNameCap(maxLockNames(properties));
    }

    /** The span around each acquire, when the application observes (and traces). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class Observing {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        RelockObservations relockObservations(Relock relock, ObservationRegistry registry) {
            return new RelockObservations(relock, registry);
        }
    }
}
