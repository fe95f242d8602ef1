package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;

import io.relock.Relock;
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

    @Test
    void downWhenTheWatchdogsLastTickWasLateByMoreThanAWatchdogTimeoutUntilATickIsOnTime() {
        try (RedisServer server = RedisServer.start();
                ActuatorApp app = ActuatorApp.start(server, "relock.watchdog-timeout=1500ms")) {
            RelockHealthIndicator indicator = app.bean(RelockHealthIndicator.class);
            assertThat(app.get(HEALTH).status()).isEqualTo(200);

            // What the client reports after its timer thread was held up for 2 s, as in a JVM pause.
            indicator.ticked(new WatchdogTickEvent(0, 0, 0, TimeUnit.SECONDS.toNanos(2)));

            ActuatorApp.Response down = app.get(HEALTH);
            assertThat(down.status()).as(down.body()).isEqualTo(503);
            assertThat(down.json().get("details").get("error").asString())
                    .isEqualTo("the watchdog's last tick started 2000 ms late, more than the watchdog timeout 1500 ms");
            assertThat(down.json().get("details").get("watchdogLagMillis").asLong()).isEqualTo(2000);
            Eventually.await(Duration.ofSeconds(10), "the next real tick makes it UP",
                    () -> app.get(HEALTH).status() == 200);
        }
    }
}
