package io.relock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

/**
 * Turns on Relock in a Spring application without Spring Boot: put it on a
 * {@code @Configuration} class of a context that has one {@link io.relock.Relock} bean, and the
 * context gets the {@link WithLock} and {@link LeaderOnly} advice, a {@link RelockTemplate}, the
 * {@link RelockLeadership} that runs the elections and publishes their events, and the check
 * before commit of transactions begun inside a guarded call (when spring-tx is present). See
 * {@link RelockConfiguration} for the beans, and {@link RelockConfigurer} to change their
 * settings.
 *
 * <pre>{@code
 * @Configuration
 * @EnableRelock
 * class LockConfig {
 *     @Bean(destroyMethod = "close")
 *     Relock relock() {
 *         return Relock.create(RelockConfig.builder().singleServer("redis://localhost:6379").build());
 *     }
 * }
 * }</pre>
 *
 * <p>Spring Boot applications do not need it: the auto-configuration applies it (with
 * {@code proxyTargetClass = true}, as Boot proxies classes by default) unless the application
 * already has it.
 *
 * <p>Failure behaviour: a context without a {@link io.relock.Relock} bean, or with two, fails to
 * start when the template is created; a {@link WithLock} or {@link LeaderOnly} method whose
 * attributes are wrong fails the start naming the method.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import({ RelockConfiguration.class, RelockProxyRegistrar.class })
public @interface EnableRelock {

    /**
     * Whether proxies are made by subclassing (CGLIB) rather than from the bean's interfaces.
     * Like the attribute of Spring's own {@code @Enable*} annotations, this applies to every
     * auto-proxied bean of the context, not only to Relock's.
     *
     * @return true for class proxies; false (the default) for interface proxies where the bean
     *     has interfaces
     */
    boolean proxyTargetClass() default false;

    /**
     * The order of the {@link WithLock} and {@link LeaderOnly} advice among the other advisors
     * of a bean. The default, first, keeps the lock held around the whole of a
     * {@code @Transactional} method (its commit included), and skips a {@link LeaderOnly} call
     * before any transaction opens: give a later order only with that in mind.
     *
     * @return the advisors' order
     */
    int order() default Ordered.HIGHEST_PRECEDENCE;
}
