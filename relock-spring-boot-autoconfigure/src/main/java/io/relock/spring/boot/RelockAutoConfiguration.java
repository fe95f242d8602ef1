package io.relock.spring.boot;

import java.time.Duration;
import java.util.Collection;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
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
@Import({ RelockAutoConfiguration.MissingStoreModule.class, RelockAutoConfiguration.DatabaseClientConfiguration.class,
        RelockAutoConfiguration.ZooKeeperClientConfiguration.class, RelockAutoConfiguration.ClientConfiguration.class,
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

    /**
     * The client on a ZooKeeper ensemble ({@code relock.store=zookeeper}): Relock's own Curator
     * client on {@code relock.zookeeper.connect-string}, or else the application's
     * {@code CuratorFramework} bean, which Relock leaves open when it closes.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.relock.zookeeper.RelockZooKeeper")
    @ConditionalOnProperty(name = "relock.store", havingValue = "zookeeper")
    static class ZooKeeperClientConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        Relock relock(RelockProperties properties, ObjectProvider<org.apache.curator.framework.CuratorFramework> curator,
                ObjectProvider<RelockConfigCustomizer> customizers) {
            RelockProperties.ZooKeeper zookeeper = properties.getZookeeper();
            RelockConfig config = SpringRelockConfig.buildForDatabase(
                    io.relock.zookeeper.RelockZooKeeper.PLACEHOLDER_SERVER, properties,
                    customizers.orderedStream().toList());
            io.relock.zookeeper.RelockZooKeeper.Builder builder;
            String connectString = zookeeper.getConnectString();
            if (connectString != null) {
                builder = setting("relock.zookeeper.connect-string", connectString,
                        () -> io.relock.zookeeper.RelockZooKeeper.builder(connectString));
                if (zookeeper.getSessionTimeout() != null) {
                    setting("relock.zookeeper.session-timeout", zookeeper.getSessionTimeout(),
                            () -> builder.sessionTimeout(zookeeper.getSessionTimeout()));
                }
            } else {
                org.apache.curator.framework.CuratorFramework application = curator.getIfUnique();
                if (application == null) {
                    throw new InvalidConfigurationPropertyValueException("relock.zookeeper.connect-string", null,
                            "relock.store=zookeeper needs the ensemble: set relock.zookeeper.connect-string, or"
                                    + " define one CuratorFramework bean for Relock to use");
                }
                if (zookeeper.getSessionTimeout() != null) {
                    throw new InvalidConfigurationPropertyValueException("relock.zookeeper.session-timeout",
                            zookeeper.getSessionTimeout(), "it applies to Relock's own Curator client, with"
                                    + " relock.zookeeper.connect-string; the application's CuratorFramework bean has"
                                    + " its own session timeout");
                }
                builder = setting("relock.store", "zookeeper",
                        () -> io.relock.zookeeper.RelockZooKeeper.builder(application));
            }
            setting("relock.zookeeper.root", zookeeper.getRoot(), () -> builder.root(zookeeper.getRoot()));
            setting("relock.zookeeper.operation-threads", zookeeper.getOperationThreads(),
                    () -> builder.operationThreads(zookeeper.getOperationThreads()));
            return builder.config(config).build();
        }

        /** Applies one setting; a value the builder refuses fails the start naming the property. */
        private static <T> T setting(String property, Object value, java.util.function.Supplier<T> apply) {
            try {
                return apply.get();
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new InvalidConfigurationPropertyValueException(property, value, e.getMessage());
            }
        }
    }

    /**
     * {@code relock.store=jdbc} or {@code zookeeper} without the module that keeps the locks
     * there: the start fails saying which to add, rather than leaving the application without
     * a client, or on Redis.
     */
    @Configuration(proxyBeanMethods = false)
    static class MissingStoreModule {

        @Bean
        @ConditionalOnProperty(name = "relock.store", havingValue = "jdbc")
        @ConditionalOnMissingClass("io.relock.jdbc.RelockJdbc")
        Object relockJdbcModuleMissing() {
            throw missing("jdbc", "relock-jdbc");
        }

        @Bean
        @ConditionalOnProperty(name = "relock.store", havingValue = "zookeeper")
        @ConditionalOnMissingClass("io.relock.zookeeper.RelockZooKeeper")
        Object relockZooKeeperModuleMissing() {
            throw missing("zookeeper", "relock-zookeeper");
        }

        private static InvalidConfigurationPropertyValueException missing(String store, String module) {
            return new InvalidConfigurationPropertyValueException("relock.store", store,
                    "add the dependency io.relock:" + module + " beside the starter");
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
