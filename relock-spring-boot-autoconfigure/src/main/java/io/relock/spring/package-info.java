/**
 * Relock in Spring Boot 4.0 and 4.1: a {@link io.relock.Relock} bean built from Spring Boot's
 * Redis connection details and the {@code relock.*} properties ({@link io.relock.spring.RelockProperties}),
 * the {@link io.relock.spring.WithLock} annotation that holds a lock around a method — outside a
 * transaction on the same method — and {@link io.relock.spring.RelockTemplate}, the same for code
 * without a proxy; the {@link io.relock.spring.LeaderOnly} annotation that runs a method (a
 * {@code @Scheduled} job) only on the leader of a named election, with
 * {@link io.relock.spring.RelockLeadership}, which runs the elections and publishes
 * {@link io.relock.spring.LeadershipGrantedEvent} and {@link io.relock.spring.LeadershipRevokedEvent}.
 * With Spring Boot's actuator: the endpoint {@code locks}
 * ({@link io.relock.spring.LocksEndpoint}) and the health indicator {@code relock}
 * ({@link io.relock.spring.RelockHealthIndicator}).
 *
 * <p>Everything public here is API; the other types are package-private.
 */
package io.relock.spring;
