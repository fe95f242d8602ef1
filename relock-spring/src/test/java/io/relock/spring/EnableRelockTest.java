package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.MapPropertySource;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;

/**
 * {@link EnableRelock} in a plain Spring context (no Boot): the beans it registers, the settings
 * of a {@link RelockConfigurer}, its {@code order} and {@code proxyTargetClass} attributes.
 */
class EnableRelockTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static AnnotationConfigApplicationContext start(Class<?>... configurations) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources()
                .addFirst(new MapPropertySource("test", Map.of("redis.uri", redis.server().uri())));
        context.register(configurations);
        context.refresh();
        return context;
    }

    @Test
    void theTemplateTheElectionsAndTheAdvisorsOverTheContextsClient() {
        try (AnnotationConfigApplicationContext context = start(Client.class, Plain.class, Services.class)) {
            RelockTemplate template = context.getBean(RelockTemplate.class);
            assertThat(template.relock()).isSameAs(context.getBean(Relock.class));
            assertThat(template.defaultWaitTime()).isNull();
            assertThat(context.getBean(RelockLeadership.class).names()).containsExactly("digest");
            for (String name : List.of("relockWithLockAdvisor", "relockLeaderOnlyAdvisor", "relockTransactionLeaseCheck")) {
                assertThat(context.getBeanFactory().getBeanDefinition(name).getRole()).as(name)
                        .isEqualTo(BeanDefinition.ROLE_INFRASTRUCTURE);
            }
            assertThat(context.getBeansOfType(Advisor.class).values()).extracting(advisor -> ((Ordered) advisor).getOrder())
                    .containsOnly(Ordered.HIGHEST_PRECEDENCE);
            Billing billing = context.getBean(Billing.class);
            assertThat(AopUtils.isJdkDynamicProxy(billing)).as("an interface proxy by default").isTrue();
            assertThat(billing.charge("7")).isEqualTo(List.of("bill:7"));
        }
    }

    @Test
    void aConfigurerSetsTheDefaultWaitTheLossRuleAndTheElections() {
        try (AnnotationConfigApplicationContext context = start(Client.class, Configured.class, Services.class)) {
            assertThat(context.getBean(RelockTemplate.class).defaultWaitTime()).isEqualTo(Duration.ofMillis(150));
            RelockLeadership leadership = context.getBean(RelockLeadership.class);
            assertThat(leadership.names()).isEmpty();
            assertThat(leadership.isLeader("digest")).isFalse();
            assertThat(context.getBean(Digest.class).send()).as("skipped: elections are off").isNull();
        }
    }

    @Test
    void theOrderAndClassProxiesAreTheAnnotations() {
        try (AnnotationConfigApplicationContext context = start(Client.class, Ordered42.class, Services.class)) {
            assertThat(context.getBeansOfType(Advisor.class).values()).extracting(advisor -> ((Ordered) advisor).getOrder())
                    .containsOnly(42);
            assertThat(AopUtils.isCglibProxy(context.getBean(Billing.class))).isTrue();
        }
    }

    @Test
    void twoConfigurersFailTheStart() {
        assertThatThrownBy(() -> start(Client.class, Configured.class, SecondConfigurer.class))
                .hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class Client {
        @Bean(destroyMethod = "close")
        Relock relock(org.springframework.core.env.Environment environment) {
            return Relock.create(RelockConfig.builder().singleServer(environment.getRequiredProperty("redis.uri")).build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableRelock
    static class Plain {}

    @Configuration(proxyBeanMethods = false)
    @EnableRelock(order = 42, proxyTargetClass = true)
    static class Ordered42 {}

    @Configuration(proxyBeanMethods = false)
    @EnableRelock
    static class Configured {
        @Bean
        RelockConfigurer relockConfigurer() {
            return new RelockConfigurer() {
                @Override
                public Duration defaultWaitTime() {
                    return Duration.ofMillis(150);
                }

                @Override
                public boolean leaderElectionEnabled() {
                    return false;
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SecondConfigurer {
        @Bean
        RelockConfigurer another() {
            return new RelockConfigurer() {
                @Override
                public Collection<String> leaderElectionNames() {
                    return List.of("other");
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {
        @Bean
        Billing billing() {
            return new LockedBilling();
        }

        @Bean
        Digest digest() {
            return new Digest();
        }
    }

    interface Billing {
        List<String> charge(String orderId);
    }

    static class LockedBilling implements Billing {
        @Override
        @WithLock(name = "bill", key = "#orderId")
        public List<String> charge(String orderId) {
            return RelockLocks.current().lockNames();
        }
    }

    static class Digest {
        @LeaderOnly("digest")
        public String send() {
            return "sent";
        }
    }
}
