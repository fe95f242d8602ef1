package io.relock.spring.boot;

import java.time.Clock;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.relock.Relock;
import io.relock.spring.RelockLeadership;

/**
 * Auto-configuration of the Actuator endpoint {@code locks} ({@link LocksEndpoint}) and the
 * history of lease losses it shows. Needs Spring Boot's actuator on the classpath, a
 * {@link Relock} bean, and the endpoint available: exposed
 * ({@code management.endpoints.web.exposure.include=locks}) and its access not {@code none}.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass({ WebEndpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(Relock.class)
@ConditionalOnAvailableEndpoint(LocksEndpoint.class)
public class RelockEndpointAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockEndpointAutoConfiguration() {}

    @Bean(destroyMethod = "close")
    LockLosses relockLockLosses(Relock relock) {
        return LockLosses.register(relock, Clock.systemUTC());
    }

    @Bean
    @ConditionalOnMissingBean
    LocksEndpoint locksEndpoint(Relock relock, LockLosses relockLockLosses,
            ObjectProvider<RelockLeadership> leadership) {
        return new LocksEndpoint(relock, relockLockLosses, leadership::getIfAvailable);
    }
}
