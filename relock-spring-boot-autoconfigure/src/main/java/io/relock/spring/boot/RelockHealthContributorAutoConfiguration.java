package io.relock.spring.boot;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.relock.Relock;

/**
 * Auto-configuration of the health indicator {@code relock} ({@link RelockHealthIndicator}).
 * Needs Spring Boot's health module on the classpath and a {@link Relock} bean; off with
 * {@code management.health.relock.enabled=false}. An application's own bean named
 * {@code relockHealthIndicator} replaces it.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(Relock.class)
@ConditionalOnEnabledHealthIndicator("relock")
public class RelockHealthContributorAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockHealthContributorAutoConfiguration() {}

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(name = "relockHealthIndicator")
    RelockHealthIndicator relockHealthIndicator(Relock relock, ObjectProvider<RelockProperties> properties) {
        RelockProperties.Store store = properties.getIfAvailable(RelockProperties::new).getStore();
        String name = switch (store) {
            case REDIS -> "Redis";
            case JDBC -> "the database";
            case ZOOKEEPER -> "ZooKeeper";
        };
        return RelockHealthIndicator.register(relock, name, System::nanoTime);
    }
}
