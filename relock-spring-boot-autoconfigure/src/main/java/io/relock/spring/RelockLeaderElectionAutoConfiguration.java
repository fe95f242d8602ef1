package io.relock.spring;

import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;

import io.relock.Relock;

/**
 * Auto-configuration of leader election: the {@link LeaderOnly} advice and the
 * {@link RelockLeadership} bean that runs the elections ({@code relock.leader-election.*}) and
 * publishes their events. Off with {@code relock.enabled=false}, like the rest of the starter.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class, before = RelockEndpointAutoConfiguration.class)
@ConditionalOnClass(Relock.class)
@ConditionalOnBooleanProperty(name = "relock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RelockProperties.class)
public class RelockLeaderElectionAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RelockLeaderElectionAutoConfiguration() {}

    /**
     * The elections this application runs for, started when the context is ready.
     *
     * @param relock the client
     * @param properties the {@code relock.*} properties
     * @param publisher publishes the granted and revoked events
     * @param advisor the {@link LeaderOnly} advice, which knows the names its methods use
     * @return the elections
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Relock.class)
    public RelockLeadership relockLeadership(Relock relock, RelockProperties properties,
            ApplicationEventPublisher publisher, ObjectProvider<LeaderOnlyAdvisor> advisor) {
        RelockProperties.LeaderElection settings = properties.getLeaderElection();
        return new RelockLeadership(relock, publisher, settings.isEnabled(), settings.getNames(),
                () -> advisor.stream().flatMap(found -> found.interceptor.electionNames().stream()).toList());
    }

    /**
     * The {@link LeaderOnly} advice, first in the advice chain: a call skipped on an instance
     * that does not lead opens no transaction.
     *
     * @param leadership the elections, looked up at the first call
     * @param beanFactory resolves placeholders in the annotation
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LeaderOnlyAdvisor relockLeaderOnlyAdvisor(ObjectProvider<RelockLeadership> leadership,
            ConfigurableListableBeanFactory beanFactory) {
        return new LeaderOnlyAdvisor(new LeaderOnlyInterceptor(leadership, beanFactory));
    }

    /** The advisor of {@link LeaderOnly}, a type of its own so that {@link RelockLeadership} finds its names. */
    static final class LeaderOnlyAdvisor extends DefaultPointcutAdvisor {

        private static final long serialVersionUID = 1L;

        final transient LeaderOnlyInterceptor interceptor;

        LeaderOnlyAdvisor(LeaderOnlyInterceptor interceptor) {
            super(interceptor, interceptor);
            this.interceptor = interceptor;
            setOrder(Ordered.HIGHEST_PRECEDENCE);
        }
    }
}
