/**
 * Relock in Spring Boot 4.0 and 4.1: a {@link io.relock.Relock} bean built from Spring Boot's
 * Redis connection details and the {@code relock.*} properties
 * ({@link io.relock.spring.boot.RelockProperties}), and what {@link io.relock.spring.EnableRelock}
 * sets up in any Spring application ({@code @WithLock}, {@code @LeaderOnly}, the template, the
 * elections; see {@code io.relock.spring} in relock-spring) configured from those properties.
 * With Spring Boot's actuator: the endpoint {@code locks}
 * ({@link io.relock.spring.boot.LocksEndpoint}) and the health indicator {@code relock}
 * ({@link io.relock.spring.boot.RelockHealthIndicator}).
 *
 * <p>Everything public here is API; the other types are package-private.
 */
package io.relock.spring.boot;
