/**
 * Relock in Spring applications, with or without Spring Boot: {@link io.relock.spring.EnableRelock}
 * on a {@code @Configuration} with a {@link io.relock.Relock} bean turns it on; the
 * {@link io.relock.spring.WithLock} annotation holds a lock around a method — outside a
 * transaction on the same method — and {@link io.relock.spring.RelockTemplate} does the same for
 * code without a proxy; the {@link io.relock.spring.LeaderOnly} annotation runs a method (a
 * {@code @Scheduled} job) only on the leader of a named election, with
 * {@link io.relock.spring.RelockLeadership}, which runs the elections and publishes
 * {@link io.relock.spring.LeadershipGrantedEvent} and {@link io.relock.spring.LeadershipRevokedEvent};
 * {@link io.relock.spring.RelockConfigurer} changes their settings. Spring Boot's
 * auto-configuration ({@code io.relock.spring.boot}, in relock-spring-boot-autoconfigure) sets
 * all of this up from the {@code relock.*} properties.
 *
 * <p>Everything public here is API; the other types are package-private.
 */
package io.relock.spring;
