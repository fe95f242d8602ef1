package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.h2.H2ConnectionOption;
import io.r2dbc.spi.ConnectionFactory;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.reactor.ReactiveLock;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import io.relock.spring.WithLock;

/**
 * Seed 000's recharge, reactive: a {@code @WithLock @Transactional} method returning a
 * {@code Mono}, on R2DBC (H2 in memory) with Spring's reactive transactions. The lock is taken
 * before the reactive transaction begins and released after it committed (history checked from
 * a commit hook: at commit the pipeline's owner still holds the lock); ten concurrent retries on
 * two application contexts (two Relock clients on one Redis, one database) credit once; a
 * cancelled subscription and an error release the lock and roll back; a lock lost while the
 * transaction is open cancels it, so that it rolls back, and the caller gets
 * {@link LockLostException}.
 */
class ReactiveRechargeTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    private RedisServer server;
    private String database;

    @BeforeEach
    void freshDatabase(RedisServer server) {
        this.server = server;
        this.database = "recharge-" + UUID.randomUUID();
        // The same in-memory database as the contexts' R2DBC connections: one H2 engine, one name.
        JdbcTemplate jdbc = new JdbcTemplate(new DriverManagerDataSource("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1"));
        jdbc.execute("CREATE TABLE account (id VARCHAR(20) PRIMARY KEY, balance BIGINT NOT NULL)");
        jdbc.execute("CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, status VARCHAR(10) NOT NULL)");
        jdbc.update("INSERT INTO account (id, balance) VALUES ('alice', 0)");
        for (String order : List.of("r1", "r2", "r3", "r4", "r5", "r6")) {
            jdbc.update("INSERT INTO orders (id, status) VALUES (?, 'NEW')", order);
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + server.uri(), "test.database=" + database)
                .withUserConfiguration(Recharge.class);
    }

    @Test
    void theLockIsStillHeldByThePipelineWhenTheReactiveTransactionCommitsAndReleasedAfter() {
        runner().run(context -> {
            RechargeService service = context.getBean(RechargeService.class);
            Relock relock = context.getBean(Relock.class);
            List<String> history = new CopyOnWriteArrayList<>();
            service.onCredit(orderId -> Mono.deferContextual(view -> {
                long owner = ReactiveLock.ownerIn(view).orElseThrow();
                DistributedLock lock = relock.getLock("recharge:" + orderId);
                return TransactionSynchronizationManager.forCurrentTransaction().doOnNext(transaction ->
                        transaction.registerSynchronization(new TransactionSynchronization() {
                            @Override
                            public Mono<Void> afterCommit() {
                                return heldBy(lock, owner).doOnNext(held -> history.add("after commit: held " + held))
                                        .then();
                            }
                        })).then(heldBy(lock, owner)).doOnNext(held -> history.add("body: held " + held)).then();
            }));
            assertThat(service.recharge("r1", 100).block(PROMPTLY)).isTrue();
            assertThat(history).containsExactly("body: held true", "after commit: held true");
            assertThat(relock.getLock("recharge:r1").isLocked()).isFalse();
            assertThat(service.balance().block(PROMPTLY)).isEqualTo(100);
        });
    }

    @Test
    void tenConcurrentRetriesOnTwoInstancesCreditOnce() {
        ApplicationContextRunner runner = runner();
        runner.run(first -> runner.run(second -> {
            List<RechargeService> instances = List.of(first.getBean(RechargeService.class),
                    second.getBean(RechargeService.class));
            assertThat(first.getBean(Relock.class).clientId()).isNotEqualTo(second.getBean(Relock.class).clientId());
            List<Boolean> credited = Flux.range(0, 10)
                    .flatMap(i -> instances.get(i % 2).recharge("r2", 100).subscribeOn(Schedulers.parallel()))
                    .collectList().block(Duration.ofSeconds(60));
            assertThat(credited).hasSize(10).containsOnlyOnce(true);
            assertThat(instances.get(0).balance().block(PROMPTLY)).isEqualTo(100);
            assertThat(instances.get(1).status("r2").block(PROMPTLY)).isEqualTo("PAID");
        }));
    }

    @Test
    void whenTheLockIsNotAcquiredNoTransactionBegins() {
        runner().run(context -> {
            try (Relock holder = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                CountingTransactionManager transactions = context.getBean(CountingTransactionManager.class);
                DistributedLock lock = holder.getLock("recharge:r3");
                lock.lock();
                try {
                    assertThatThrownBy(() -> service.rechargeNow("r3", 100).block(PROMPTLY))
                            .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("recharge:r3");
                } finally {
                    lock.unlock();
                }
                assertThat(transactions.begun).hasValue(0);
                assertThat(service.rechargeNow("r3", 100).block(PROMPTLY)).isTrue();
                assertThat(transactions.begun).hasValue(1);
            }
        });
    }

    @Test
    void cancellingTheSubscriptionRollsBackAndReleases() {
        runner().run(context -> {
            RechargeService service = context.getBean(RechargeService.class);
            Relock relock = context.getBean(Relock.class);
            AtomicInteger reached = new AtomicInteger();
            service.onCredit(orderId -> Mono.<Void>never().doOnSubscribe(subscription -> reached.incrementAndGet()));
            Disposable call = service.recharge("r4", 100).subscribe();
            Eventually.await(PROMPTLY, "the credit is inside its transaction", () -> reached.get() == 1);
            assertThat(relock.getLock("recharge:r4").isLocked()).isTrue();
            call.dispose();
            Eventually.await(PROMPTLY, "recharge:r4 released", () -> !relock.getLock("recharge:r4").isLocked());
            Eventually.await(PROMPTLY, "the credit rolled back",
                    () -> "NEW".equals(service.status("r4").block(PROMPTLY)));
            assertThat(service.balance().block(PROMPTLY)).isZero();
        });
    }

    @Test
    void anErrorRollsBackReleasesAndReachesTheCaller() {
        runner().run(context -> {
            RechargeService service = context.getBean(RechargeService.class);
            Relock relock = context.getBean(Relock.class);
            service.onCredit(orderId -> Mono.error(new IllegalStateException("payment provider refused")));
            assertThatThrownBy(() -> service.recharge("r5", 100).block(PROMPTLY))
                    .isInstanceOf(IllegalStateException.class).hasMessage("payment provider refused");
            assertThat(relock.getLock("recharge:r5").isLocked()).isFalse();
            assertThat(service.status("r5").block(PROMPTLY)).isEqualTo("NEW");
            assertThat(service.balance().block(PROMPTLY)).isZero();
        });
    }

    @Test
    void aLockLostInsideTheTransactionCancelsItSoItRollsBackAndTheCallerGetsLockLost() {
        // A short watchdog lease: renewals every second, so that the force-unlock shows soon.
        runner().withPropertyValues("relock.watchdog-timeout=3s").run(context -> {
            try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                AtomicInteger reached = new AtomicInteger();
                service.onCredit(orderId -> Mono.<Void>never().doOnSubscribe(subscription -> reached.incrementAndGet()));
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                service.recharge("r6", 100).subscribe(credited -> { }, failures::add);
                Eventually.await(PROMPTLY, "the credit is inside its transaction", () -> reached.get() == 1);
                assertThat(other.forceUnlock("recharge:r6")).isTrue();
                Eventually.await(PROMPTLY, "the loss reached the caller", () -> !failures.isEmpty());
                assertThat(failures.get(0)).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("'recharge:r6' was lost");
                Eventually.await(PROMPTLY, "the credit rolled back",
                        () -> "NEW".equals(service.status("r6").block(PROMPTLY)));
                assertThat(service.balance().block(PROMPTLY)).isZero();
            }
        });
    }

    /** Whether {@code owner} holds {@code lock}: asked on a thread that may block, as the client's question blocks. */
    private static Mono<Boolean> heldBy(DistributedLock lock, long owner) {
        return Mono.fromCallable(() -> lock.isHeldByThread(owner)).subscribeOn(Schedulers.boundedElastic());
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Recharge {

        @Bean
        ConnectionFactory connectionFactory(Environment environment) {
            return new H2ConnectionFactory(H2ConnectionConfiguration.builder()
                    .inMemory(environment.getRequiredProperty("test.database"))
                    .property(H2ConnectionOption.DB_CLOSE_DELAY, "-1").build());
        }

        @Bean
        CountingTransactionManager transactionManager(ConnectionFactory connections) {
            return new CountingTransactionManager(connections);
        }

        @Bean
        RechargeService rechargeService(ConnectionFactory connections) {
            return new RechargeService(DatabaseClient.create(connections));
        }
    }

    static class CountingTransactionManager extends R2dbcTransactionManager {

        private static final long serialVersionUID = 1L;

        final transient AtomicInteger begun = new AtomicInteger();

        CountingTransactionManager(ConnectionFactory connections) {
            super(connections);
        }

        @Override
        protected Mono<Void> doBegin(TransactionSynchronizationManager synchronizations, Object transaction,
                TransactionDefinition definition) {
            begun.incrementAndGet();
            return super.doBegin(synchronizations, transaction, definition);
        }
    }

    /** Seed 000's recharge, reactive: credit an order's amount once, however often the request is retried. */
    static class RechargeService {

        private final DatabaseClient db;
        private volatile Function<String, Mono<Void>> inside = orderId -> Mono.empty();

        RechargeService(DatabaseClient db) {
            this.db = db;
        }

        @WithLock(name = "recharge", key = "#orderId", waitTime = "30s")
        @Transactional
        public Mono<Boolean> recharge(String orderId, long amount) {
            return credit(orderId, amount);
        }

        @WithLock(name = "recharge", key = "#orderId", waitTime = "0")
        @Transactional
        public Mono<Boolean> rechargeNow(String orderId, long amount) {
            return credit(orderId, amount);
        }

        private Mono<Boolean> credit(String orderId, long amount) {
            // The seed's check-then-act: nothing but the lock keeps two retries from both seeing NEW.
            return status(orderId).flatMap(status -> !"NEW".equals(status) ? Mono.just(false)
                    : db.sql("UPDATE account SET balance = balance + :amount WHERE id = 'alice'").bind("amount", amount)
                            .fetch().rowsUpdated()
                            .then(db.sql("UPDATE orders SET status = 'PAID' WHERE id = :id").bind("id", orderId)
                                    .fetch().rowsUpdated())
                            .then(Mono.defer(() -> inside.apply(orderId)))
                            .thenReturn(true));
        }

        /** Code to run inside the transaction, after the credit: the test's probe. */
        public void onCredit(Function<String, Mono<Void>> probe) {
            inside = Objects.requireNonNull(probe);
        }

        public Mono<Long> balance() {
            return db.sql("SELECT balance FROM account WHERE id = 'alice'").map(row -> row.get("balance", Long.class))
                    .one();
        }

        public Mono<String> status(String orderId) {
            return db.sql("SELECT status FROM orders WHERE id = :id").bind("id", orderId)
                    .map(row -> row.get("status", String.class)).one();
        }
    }
}
