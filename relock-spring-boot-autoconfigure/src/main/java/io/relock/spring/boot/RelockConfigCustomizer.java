package io.relock.spring.boot;

import io.relock.RelockConfig;

/**
 * A bean that adjusts the {@link RelockConfig} the auto-configuration builds from Spring Boot's
 * Redis settings and the {@code relock.*} properties, for what has no property. Customizers run
 * in {@link org.springframework.core.Ordered order}, after the properties were applied; a setting
 * that the properties already set cannot be set again (the builder refuses it). Neither can
 * {@code releaseOnShutdown}, which the auto-configuration sets to {@code false}: the application
 * context closes the client when it stops, after the beans that lock have stopped, so the
 * client's own JVM shutdown hook would only race it.
 */
@FunctionalInterface
public interface RelockConfigCustomizer {

    /**
     * Adjusts the configuration before it is built.
     *
     * @param builder the builder, with the properties applied
     */
    void customize(RelockConfig.Builder builder);
}
