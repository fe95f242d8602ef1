package io.relock.spring;

import java.util.Map;

import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

import io.relock.Relock;

/**
 * The beans of {@link EnableRelock}, over the context's {@link Relock} bean: the
 * {@link RelockTemplate} ({@code relockTemplate}), the {@link RelockLeadership}
 * ({@code relockLeadership}), the {@link WithLock} and {@link LeaderOnly} advisors, and, when
 * spring-tx is on the class path, the check added to every transaction manager that rolls back a
 * transaction begun inside a guarded call when the lock is gone before it commits. The settings
 * come from the context's {@link RelockConfigurer} bean, if it has one.
 *
 * <p>Imported by {@link EnableRelock}; Spring Boot's auto-configuration imports it the same way.
 * The advisors and the check are infrastructure beans; the advisors find the template and the
 * elections at the first guarded call, so they can be created before the client.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class RelockConfiguration implements ImportAware {

    private int order = Ordered.HIGHEST_PRECEDENCE;

    /** Creates the configuration; Spring calls it. */
    public RelockConfiguration() {}

    @Override
    public void setImportMetadata(AnnotationMetadata metadata) {
        Map<String, Object> attributes = metadata.getAnnotationAttributes(EnableRelock.class.getName());
        if (attributes != null) {
            order = (Integer) attributes.get("order");
        }
    }

    /**
     * The template over the client, which the {@link WithLock} advice also uses.
     *
     * @param relock the client
     * @param configurer the settings, if the context has them
     * @return the template
     */
    @Bean
    public RelockTemplate relockTemplate(Relock relock, ObjectProvider<RelockConfigurer> configurer) {
        RelockConfigurer settings = configurer.getIfAvailable(Defaults::new);
        return new RelockTemplate(relock, settings.throwOnLockLost(), settings.defaultWaitTime());
    }

    /**
     * The elections this application runs for, started when the context is ready.
     *
     * @param relock the client
     * @param configurer the settings, if the context has them
     * @param publisher publishes the granted and revoked events
     * @param advisor the {@link LeaderOnly} advice, which knows the names its methods use
     * @return the elections
     */
    @Bean
    public RelockLeadership relockLeadership(Relock relock, ObjectProvider<RelockConfigurer> configurer,
            ApplicationEventPublisher publisher, ObjectProvider<LeaderOnlyAdvisor> advisor) {
        RelockConfigurer settings = configurer.getIfAvailable(Defaults::new);
        return new RelockLeadership(relock, publisher, settings.leaderElectionEnabled(),
                settings.leaderElectionNames(),
                () -> advisor.stream().flatMap(found -> found.interceptor.electionNames().stream()).toList());
    }

    /**
     * The {@link WithLock} advice, first in every advice chain by default (before transactions).
     *
     * @param template the template, looked up at the first call
     * @param beanFactory resolves placeholders and bean references in the annotation
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    DefaultPointcutAdvisor relockWithLockAdvisor(ObjectProvider<RelockTemplate> template,
            ConfigurableListableBeanFactory beanFactory) {
        WithLockInterceptor interceptor = new WithLockInterceptor(template, beanFactory);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(interceptor, interceptor);
        advisor.setOrder(order);
        return advisor;
    }

    /**
     * The {@link LeaderOnly} advice, first in the advice chain by default: a call skipped on an
     * instance that does not lead opens no transaction.
     *
     * @param leadership the elections, looked up at the first call
     * @param beanFactory resolves placeholders in the annotation
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    LeaderOnlyAdvisor relockLeaderOnlyAdvisor(ObjectProvider<RelockLeadership> leadership,
            ConfigurableListableBeanFactory beanFactory) {
        LeaderOnlyAdvisor advisor = new LeaderOnlyAdvisor(new LeaderOnlyInterceptor(leadership, beanFactory));
        advisor.setOrder(order);
        return advisor;
    }

    /**
     * The check before commit of transactions that begin inside a guarded call, added to every
     * transaction manager of the context; see {@link TransactionLeaseCheck}. Static: a
     * post-processor is created before the other beans.
     *
     * @return the post-processor that installs the check
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @Conditional(OnTransactions.class)
    static BeanPostProcessor relockTransactionLeaseCheck() {
        return TransactionLeaseCheck.installer();
    }

    /** The advisor of {@link LeaderOnly}, a type of its own so that {@link RelockLeadership} finds its names. */
    static final class LeaderOnlyAdvisor extends DefaultPointcutAdvisor {

        private static final long serialVersionUID = 1L;

        final transient LeaderOnlyInterceptor interceptor;

        LeaderOnlyAdvisor(LeaderOnlyInterceptor interceptor) {
            super(interceptor, interceptor);
            this.interceptor = interceptor;
        }
    }

    /** The settings when the context has no {@link RelockConfigurer}: every default. */
    private static final class Defaults implements RelockConfigurer {}

    /** Whether spring-tx, in a version with transaction execution listeners, is on the class path. */
    static final class OnTransactions implements Condition {

        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return ClassUtils.isPresent("org.springframework.transaction.ConfigurableTransactionManager",
                    context.getClassLoader());
        }
    }
}
