package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import tools.jackson.databind.JsonNode;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.WatchdogTickEvent;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;

/**
 * The {@code relock} health indicator over HTTP, across a Redis that dies and comes back, and
 * with a watchdog that falls behind; and the {@code locks} endpoint while Redis is down.
 */
class RelockHealthIndicatorTest {

    private static final String HEALTH = "/actuator/health/relock";

    @Test
    void upThenDownWhileRedisIsGoneThenUpAgain() {
        try (RedisServer server = RedisServer.start();
                ActuatorApp app = ActuatorApp.start(server, "relock.command-timeout=500ms",
                        "relock.watchdog-timeout=1500ms")) {
            Relock relock = app.bean(Relock.class);
            ActuatorApp.Response up = app.get(HEALTH);
            assertThat(up.status()).as(up.body()).isEqualTo(200);
            JsonNode json = up.json();
            assertThat(json.get("status").asString()).isEqualTo("UP");
            assertThat(json.get("details").get("clientId").asString()).isEqualTo(relock.clientId());
            assertThat(json.get("details").get("topology").asString()).isEqualTo("SINGLE_SERVER");
            assertThat(json.get("details").get("heldLocks").asInt()).isZero();

            server.kill();

            ActuatorApp.Response down = app.get(HEALTH);
            assertThat(down.status()).as(down.body()).isEqualTo(503);
            assertThat(down.json().get("status").asString()).isEqualTo("DOWN");
            assertThat(down.json().get("details").get("error").asString()).startsWith("Redis: ");
            ActuatorApp.Response lock = app.get(ActuatorApp.lockPath("order:1"));
            assertThat(lock.status()).as(lock.body()).isEqualTo(503);
            assertThat(lock.json().get("error").asString()).startsWith("Relock could not read lock 'order:1': ");
            assertThat(app.get("/actuator/locks").status()).isEqualTo(200);

            server.restart();

            Eventually.await(Duration.ofSeconds(20), "health is UP again", () -> app.get(HEALTH).status() == 200);
            assertThat(app.get(HEALTH).json().get("status").asString()).isEqualTo("UP");
        }
    }

    /** The indicator on its own, fed the ticks the client would report, on a clock the test moves. */
    @Test
    void downWhenTheWatchdogFallsBehindOrStopsUpWhenItKeepsTimeAgain() {
        try (RedisServer server = RedisServer.start();
                Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri())
                        .watchdogTimeout(Duration.ofSeconds(3)).build())) {
            AtomicLong now = new AtomicLong();
            RelockHealthIndicator indicator = new RelockHealthIndicator(relock, now::get);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);

            // What the client reports after its timer thread was held up for 4 s, as in a JVM pause.
            indicator.ticked(new WatchdogTickEvent(0, 0, 0, TimeUnit.SECONDS.toNanos(4)));
            Health late = indicator.health();
            assertThat(late.getStatus()).isEqualTo(Status.DOWN);
            assertThat(late.getDetails()).containsEntry("error",
                    "the watchdog's last tick started 4000 ms late, more than the watchdog timeout 3000 ms")
                    .containsEntry("watchdogLagMillis", 4000L);

            indicator.ticked(new WatchdogTickEvent(1, 0, 0, TimeUnit.MILLISECONDS.toNanos(3)));
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);

            now.addAndGet(TimeUnit.SECONDS.toNanos(6) + 1);
            Health silent = indicator.health();
            assertThat(silent.getStatus()).isEqualTo(Status.DOWN);
            assertThat(silent.getDetails()).containsEntry("error", "the watchdog has not ticked for 6000 ms");

            indicator.ticked(new WatchdogTickEvent(0, 0, 0, 0));
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
        }
    }
}
