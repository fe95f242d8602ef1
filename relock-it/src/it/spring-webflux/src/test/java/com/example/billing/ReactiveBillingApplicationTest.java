package com.example.billing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.relock.Relock;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The application started as a user's test starts it, on a Redis server from relock-testkit and
 * R2DBC on H2 in memory: ten concurrent retries of the Reactive guide's reactive recharge of one order
 * credit it once, each under the lock (Relock's meters count the acquisitions), and the lock of
 * each order is free again afterwards.
 */
@SpringBootTest
class ReactiveBillingApplicationTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @DynamicPropertySource
    static void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> redis.server().uri());
    }

    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    @Autowired
    private RechargeService rechargeService;

    @Autowired
    private DatabaseClient db;

    @Autowired
    private Relock relock;

    @Autowired
    private MeterRegistry meterRegistry;

    @BeforeEach
    void freshTables() {
        Flux.concat(
                db.sql("DROP TABLE IF EXISTS account").then(),
                db.sql("DROP TABLE IF EXISTS orders").then(),
                db.sql("CREATE TABLE account (id VARCHAR(20) PRIMARY KEY, balance BIGINT NOT NULL)").then(),
                db.sql("CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, status VARCHAR(10) NOT NULL)").then(),
                db.sql("INSERT INTO account (id, balance) VALUES ('alice', 0)").then(),
                db.sql("INSERT INTO orders (id, status) VALUES ('order-1', 'NEW'), ('order-2', 'NEW')").then())
                .blockLast(PROMPTLY);
    }

    @Test
    void tenConcurrentRetriesOfOneOrderCreditItOnceAndTheNextOrderIsCreditedAfter() {
        // Ten subscriptions at once: each is an owner of its own and waits for recharge:order-1.
        List<Mono<Boolean>> retries = IntStream.range(0, 10)
                .mapToObj(i -> rechargeService.recharge("order-1", 100).subscribeOn(Schedulers.boundedElastic()))
                .toList();
        List<Boolean> credited = Flux.merge(retries).collectList().block(PROMPTLY);

        assertThat(credited).hasSize(10).containsOnlyOnce(true);
        // Each of the ten ran under the lock: it waited for recharge:order-1 and took it. (On H2 the
        // ten transactions seldom overlap even without the lock, so the balance alone proves little.)
        assertThat(acquisitions("recharge:order-1")).isEqualTo(10);
        assertThat(balance()).isEqualTo(100);
        assertThat(status("order-1")).isEqualTo("PAID");
        assertThat(relock.getLock("recharge:order-1").isLocked()).isFalse();

        assertThat(rechargeService.recharge("order-2", 100).block(PROMPTLY)).isTrue();
        assertThat(rechargeService.recharge("order-1", 100).block(PROMPTLY)).isFalse();
        assertThat(balance()).isEqualTo(200);
        assertThat(acquisitions("recharge:order-1")).isEqualTo(11);
        assertThat(acquisitions("recharge:order-2")).isEqualTo(1);
        assertThat(status("order-2")).isEqualTo("PAID");
        assertThat(relock.getLock("recharge:order-2").isLocked()).isFalse();
    }

    private long acquisitions(String lockName) {
        return meterRegistry.get("relock.lock.wait").tag("lock", lockName).tag("outcome", "acquired").timer().count();
    }

    private long balance() {
        return db.sql("SELECT balance FROM account WHERE id = 'alice'")
                .map(row -> row.get("balance", Long.class)).one().block(PROMPTLY);
    }

    private String status(String orderId) {
        return db.sql("SELECT status FROM orders WHERE id = :id").bind("id", orderId)
                .map(row -> row.get("status", String.class)).one().block(PROMPTLY);
    }
}
