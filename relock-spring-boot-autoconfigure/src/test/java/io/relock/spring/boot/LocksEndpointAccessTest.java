package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * When the {@code locks} endpoint and the {@code relock} health indicator exist, and that the
 * endpoint's force-unlock is refused unless its access is unrestricted.
 */
class LocksEndpointAccessTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class,
                    EndpointAutoConfiguration.class, RelockEndpointAutoConfiguration.class,
                    RelockHealthContributorAutoConfiguration.class));

    /** The default access (read-only) and an explicit read-only. */
    @ParameterizedTest
    @ValueSource(strings = { "", "read-only" })
    void forceUnlockIsRefusedUnlessAccessIsUnrestricted(String access, RedisServer server) {
        List<String> properties = new ArrayList<>();
        if (!access.isEmpty()) {
            properties.add("management.endpoint.locks.access=" + access);
        }
        try (ActuatorApp app = ActuatorApp.start(server, properties.toArray(String[]::new));
                Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            DistributedLock lock = other.getLock("order:7");
            lock.lock();
            try {
                ActuatorApp.Response refused = app.delete(ActuatorApp.lockPath("order:7"), "alice");
                assertThat(refused.status()).as(refused.body()).isEqualTo(405);
                assertThat(app.get(ActuatorApp.lockPath("order:7")).status()).isEqualTo(200);
                assertThat(server.command("EXISTS", "order:7")).isEqualTo(1L);
                assertThat(lock.isHeldByCurrentThread()).isTrue();
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void theEndpointExistsOnlyWhenExposedAndNotTurnedOff(RedisServer server) {
        runner.withPropertyValues("spring.data.redis.url=" + server.uri())
                .run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class)
                        .doesNotHaveBean(LockLosses.class).hasSingleBean(RelockHealthIndicator.class));
        runner.withPropertyValues("spring.data.redis.url=" + server.uri(),
                "management.endpoints.web.exposure.include=locks")
                .run(context -> assertThat(context).hasSingleBean(LocksEndpoint.class).hasSingleBean(LockLosses.class));
        // NONE: a context runner has no SpringApplication, so no lenient enum conversion of "none".
        runner.withPropertyValues("spring.data.redis.url=" + server.uri(),
                "management.endpoints.web.exposure.include=locks", "management.endpoint.locks.access=NONE")
                .run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class));
        runner.withPropertyValues("spring.data.redis.url=" + server.uri(),
                "management.endpoints.web.exposure.include=locks", "relock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class)
                        .doesNotHaveBean(RelockHealthIndicator.class));
    }

    @Test
    void theHealthIndicatorCanBeTurnedOff(RedisServer server) {
        runner.withPropertyValues("spring.data.redis.url=" + server.uri(), "management.health.relock.enabled=false")
                .run(context -> assertThat(context).hasSingleBean(Relock.class)
                        .doesNotHaveBean(RelockHealthIndicator.class));
    }

    @Test
    void withoutActuatorOrHealthOnTheClasspathTheClientStillWorks(RedisServer server) {
        runner.withClassLoader(new FilteredClassLoader(WebEndpoint.class, HealthIndicator.class))
                .withPropertyValues("spring.data.redis.url=" + server.uri(),
                        "management.endpoints.web.exposure.include=locks")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Relock.class)
                        .doesNotHaveBean(LocksEndpoint.class).doesNotHaveBean(RelockHealthIndicator.class));
    }
}
