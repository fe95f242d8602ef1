package io.relock.spring;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotationMetadata;

import io.relock.Relock;

/**
 * Auto-configuration of Relock: a {@link Relock} client built from Spring Boot's Redis
 * connection details and the {@code relock.*} properties (unless the application defines its
 * own {@code Relock} bean), a {@link RelockTemplate}, and the {@link WithLock} advice, ordered
 * outermost so that a lock is held for the whole of a transaction on the same method, and a
 * check, added to the context's transaction managers, that rolls back a transaction begun inside
 * a guarded call when the lock is gone before it commits.
 *
 * <p>Off with {@code relock.enabled=false}. The client is closed when the context closes.
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass(Relock.class)
@ConditionalOnBooleanProperty(name = "relock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RelockProperties.class)
@Import(RelockAutoConfiguration.ProxyRegistrar.class)
public class RelockAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockAutoConfiguration() {}

    /**
     * The template over the client, which the {@link WithLock} advice also uses.
     *
     * @param relock the client
     * @param properties the {@code relock.*} properties
     * @return the template
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Relock.class)
    public RelockTemplate relockTemplate(Relock relock, RelockProperties properties) {
        return new RelockTemplate(relock, properties.getOnLockLost() == RelockProperties.OnLockLost.THROW,
                properties.getDefaultWaitTime());
    }

    /**
     * The {@link WithLock} advice, first in every advice chain (before transactions).
     *
     * @param template the template, looked up at the first call
     * @param beanFactory resolves placeholders and bean references in the annotation
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DefaultPointcutAdvisor relockWithLockAdvisor(ObjectProvider<RelockTemplate> template,
            ConfigurableListableBeanFactory beanFactory) {
        WithLockInterceptor interceptor = new WithLockInterceptor(template, beanFactory);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(interceptor, interceptor);
        advisor.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return advisor;
    }

    /**
     * The check before commit of transactions that begin inside a guarded call, added to every
     * transaction manager of the context; see {@link TransactionLeaseCheck}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.transaction.ConfigurableTransactionManager")
    static class TransactionConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static BeanPostProcessor relockTransactionLeaseCheck() {
            return TransactionLeaseCheck.installer();
        }
    }

    /** The client from Spring Boot's Redis connection details. */
    @Configuration(proxyBeanMethods = false)
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

    /** Makes sure an auto-proxy creator exists, with class proxies as Spring Boot uses by default. */
    static class ProxyRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
    }
}
