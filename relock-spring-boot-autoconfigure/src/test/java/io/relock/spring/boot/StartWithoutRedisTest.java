package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.relock.Relock;
import io.relock.RelockConnectionException;
import io.relock.spring.RelockTemplate;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;

/**
 * {@code relock.require-redis-at-startup}: by default a start without Redis fails (with the
 * {@link RelockConnectionFailureAnalyzer}'s explanation); set to false, the application starts,
 * its health is DOWN and lock calls fail with {@link RelockConnectionException} until Redis is
 * reachable, and then they work. Redis is made unreachable by a fault proxy that refuses
 * connections until healed.
 */
class StartWithoutRedisTest {

    private static final String HEALTH = "/actuator/health/relock";

    @Test
    void aRedisClusterCannotStartWithoutRedisAndTheStartSaysSo() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:1", "relock.require-redis-at-startup=false")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Property relock.require-redis-at-startup with value 'false' is invalid")
                        .hasStackTraceContaining("a Redis Cluster client cannot start without Redis"));
    }

    @Test
    void byDefaultTheStartFailsWhileRedisIsUnreachable() {
        try (RedisServer server = RedisServer.start(); FaultProxy proxy = FaultProxy.to(server)) {
            proxy.refuse();
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.url=" + proxy.uri(), "relock.command-timeout=500ms")
                    .run(context -> assertThat(context).hasFailed().getFailure()
                            .hasRootCauseInstanceOf(java.io.IOException.class)
                            .hasStackTraceContaining(RelockConnectionException.class.getName()));
        }
    }

    @Test
    void withTheOptionTheApplicationStartsDownAndLocksOnceRedisIsReachable() {
        try (RedisServer server = RedisServer.start(); FaultProxy proxy = FaultProxy.to(server)) {
            proxy.refuse();
            try (ActuatorApp app = ActuatorApp.start(server, "spring.data.redis.url=" + proxy.uri(),
                    "relock.require-redis-at-startup=false", "relock.command-timeout=500ms")) {
                ActuatorApp.Response down = app.get(HEALTH);
                assertThat(down.status()).as(down.body()).isEqualTo(503);
                assertThat(down.json().get("status").asString()).isEqualTo("DOWN");
                assertThat(down.json().get("details").get("error").asString())
                        .isEqualTo("Redis: not connected; the client keeps trying to connect");

                Relock relock = app.bean(Relock.class);
                RelockTemplate template = app.bean(RelockTemplate.class);
                assertThatThrownBy(() -> relock.getLock("order:1").tryLock()).isInstanceOf(RelockConnectionException.class);
                assertThatThrownBy(() -> template.execute("order:1", Duration.ZERO, () -> "ran"))
                        .isInstanceOf(RelockConnectionException.class);

                proxy.heal();

                Eventually.await(Duration.ofSeconds(20), "health is UP once Redis is reachable",
                        () -> app.get(HEALTH).status() == 200);
                assertThat(template.execute("order:1", Duration.ZERO, () -> "ran")).isEqualTo("ran");
                assertThat(server.command("EXISTS", "order:1")).isEqualTo(0L);
            }
        }
    }
}
