package io.relock.spring.boot;

import java.time.Duration;
import java.util.Collection;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.spring.EnableRelock;
import io.relock.spring.LeaderOnly;
import io.relock.spring.RelockConfiguration;
import io.relock.spring.RelockConfigurer;
import io.relock.spring.RelockLeadership;
import io.relock.spring.RelockTemplate;
import io.relock.spring.WithLock;

/**
 * Auto-configuration of Relock: a {@link Relock} client built from Spring Boot's Redis
 * connection details and the {@code relock.*} properties (unless the application defines its
 * own {@code Relock} bean), and what {@link EnableRelock} sets up (unless the application uses
 * it itself): a {@link RelockTemplate}, the {@link WithLock} and {@link LeaderOnly} advice,
 * ordered outermost so that a lock is held for the whole of a transaction on the same method,
 * the {@link RelockLeadership} that runs the elections ({@code relock.leader-election.*}), and a
 * check, added to the context's transaction managers, that rolls back a transaction begun inside
 * a guarded call when the lock is gone before it commits. Their settings come from the
 * properties through a {@link RelockConfigurer} bean, which an application's own replaces.
 *
 * <p>Off with {@code relock.enabled=false}. The client is closed when the context closes.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration" })
@ConditionalOnClass({ Relock.class, EnableRelock.class })
@ConditionalOnBooleanProperty(name = "relock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RelockProperties.class)
// In this order: EnableRelockConfiguration's condition sees the client that ClientConfiguration defines.
@Import({ RelockAutoConfiguration.DatabaseClientConfiguration.class, RelockAutoConfiguration.ClientConfiguration.class,
        RelockAutoConfiguration.EnableRelockConfiguration.class })
public class RelockAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockAutoConfiguration() {}

    /**
     * The settings of the template and the elections, from the {@code relock.*} properties.
     *
     * @param properties the {@code relock.*} properties
     * @return the settings
     */
    @Bean
    @ConditionalOnMissingBean
    public RelockConfigurer relockPropertiesConfigurer(RelockProperties properties) {
        return new PropertiesConfigurer(properties);
    }

    /** {@link EnableRelock}'s beans, with Boot's default of class proxies. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(Relock.class)
    @ConditionalOnMissingBean(RelockConfiguration.class)
    @EnableRelock(proxyTargetClass = true)
    static class EnableRelockConfiguration {}

    /**
     * The client on the application's database ({@code relock.store=jdbc}): its
     * {@link javax.sql.DataSource}, the table of {@code relock.jdbc.*}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.relock.jdbc.RelockJdbc")
    @ConditionalOnProperty(name = "relock.store", havingValue = "jdbc")
    static class DatabaseClientConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        Relock relock(javax.sql.DataSource dataSource, RelockProperties properties,
                ObjectProvider<RelockConfigCustomizer> customizers) {
            RelockConfig config = SpringRelockConfig.buildForDatabase(io.relock.jdbc.RelockJdbc.PLACEHOLDER_SERVER,
                    properties, customizers.orderedStream().toList());
            return io.relock.jdbc.RelockJdbc.builder(dataSource).table(properties.getJdbc().getTable())
                    .createTable(properties.getJdbc().isCreateTable()).config(config).build();
        }
    }

    /** The client from Spring Boot's Redis connection details. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "relock.store", havingValue = "redis", matchIfMissing = true)
    @ConditionalOnClass(DataRedisConnectionDetails.class)
    @ConditionalOnBean(DataRedisConnectionDetails.class)
    static class ClientConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        Relock relock(DataRedisConnectionDetails connection, ObjectProvider<DataRedisProperties> redisProperties,
                RelockProperties properties, ObjectProvider<RelockConfigCustomizer> customizers) {
            return Relock.create(SpringRelockConfig.build(connection, redisProperties.getIfAvailable(), properties,
                    customizers.orderedStream().toList()));
        }
    }

    /** The {@code relock.*} properties as {@link EnableRelock}'s settings, read when its beans are made. */
    private static final class PropertiesConfigurer implements RelockConfigurer {

        private final RelockProperties properties;

        PropertiesConfigurer(RelockProperties properties) {
            this.properties = properties;
        }

        @Override
        public Duration defaultWaitTime() {
            return properties.getDefaultWaitTime();
        }

        @Override
        public boolean throwOnLockLost() {
            return properties.getOnLockLost() == RelockProperties.OnLockLost.THROW;
        }

        @Override
        public boolean leaderElectionEnabled() {
            return properties.getLeaderElection().isEnabled();
        }

        @Override
        public Collection<String> leaderElectionNames() {
            return properties.getLeaderElection().getNames();
        }
    }
}
