package com.example.billing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.testkit.RedisExtension;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application started as a user's test starts it, on a Redis server from relock-testkit:
 * the Spring guide's RechargeService runs under its lock, the Actuator shows the locks and the
 * relock health, and the meters count the holds.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BillingApplicationTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @DynamicPropertySource
    static void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> redis.server().uri());
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Autowired
    private RechargeService rechargeService;

    @Autowired
    private Relock relock;

    @Autowired
    private MeterRegistry meterRegistry;

    @Autowired
    private Environment environment;

    @Test
    void rechargeRunsUnderItsLockAndTheMetersCountIt() {
        rechargeService.recharge("42", 100);

        assertThat(meterRegistry.get("relock.lock.wait").tag("lock", "recharge:42").tag("outcome", "acquired")
                .timer().count()).isEqualTo(1);
        assertThat(meterRegistry.get("relock.lock.hold").tag("lock", "recharge:42").timer().count()).isEqualTo(1);
        assertThat(relock.getLock("recharge:42").isLocked()).isFalse();
    }

    @Test
    void theActuatorShowsAHeldLockAndRelockHealth() throws Exception {
        DistributedLock lock = relock.getLock("order:42");
        lock.lock();
        try {
            HttpResponse<String> client = get("/actuator/locks");
            assertThat(client.statusCode()).isEqualTo(200);
            assertThat(client.body()).contains("\"clientId\":\"" + relock.clientId() + "\"")
                    .contains("\"name\":\"order:42\"");

            HttpResponse<String> held = get("/actuator/locks/order:42");
            assertThat(held.statusCode()).isEqualTo(200);
            assertThat(held.body()).contains("\"type\":\"reentrant\"").contains("\"thisClient\":true");
        } finally {
            lock.unlock();
        }
        assertThat(get("/actuator/locks/order:42").statusCode()).isEqualTo(404);

        HttpResponse<String> health = get("/actuator/health/relock");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + environment.getRequiredProperty("local.server.port") + path);
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
