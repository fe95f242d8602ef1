package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.RelockLocks;
import io.relock.spring.RelockTemplate;
import io.relock.spring.WithLock;

/**
 * The lock of a {@code @WithLock @Transactional} method is taken before the transaction opens
 * and released after it committed, on a real SQL database. History checked: while the
 * transaction commits the lock is still held; when the lock is not acquired no transaction was
 * opened; ten concurrent retries on two service instances credit once. And a transaction begun
 * under the lock does not commit once the lock is gone: force-unlocked by another client or
 * expired while the method ran, it rolls back and the caller gets {@link LockLostException}.
 *
 * <p>Each subclass names a database: H2 in-process ({@link TransactionOrderOnH2Test}) and a
 * PostgreSQL server the test starts ({@link TransactionOrderOnPostgresTest}), where the
 * transactions are a separate server's, as in production. The SQL is what both accept.
 */
abstract class TransactionOrderTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private RedisServer server;
    private String database;

    /**
     * Returns a new, empty database that no other test uses.
     *
     * @return its JDBC URL, with whatever credentials it needs
     */
    abstract String newDatabase();

    @BeforeEach
    void freshDatabase(RedisServer server) {
        this.server = server;
        this.database = newDatabase();
        // Here, not in the DataSource bean: the concurrent test's two contexts share the database.
        JdbcTemplate jdbc = new JdbcTemplate(new DriverManagerDataSource(database));
        jdbc.execute("CREATE TABLE account (id VARCHAR(20) PRIMARY KEY, balance BIGINT NOT NULL)");
        jdbc.execute("CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, status VARCHAR(10) NOT NULL,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        jdbc.update("INSERT INTO account (id, balance) VALUES ('alice', 0)");
        for (String order : List.of("o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9")) {
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
    void theLockIsStillHeldWhenTheTransactionCommitsAndReleasedAfter() {
        runner().run(context -> {
            try (Relock observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                DistributedLock lock = observer.getLock("recharge:o1");
                List<String> history = new ArrayList<>();
                service.onCredit(() -> {
                    history.add("body: transaction " + TransactionSynchronizationManager.isActualTransactionActive()
                            + ", locked " + lock.isLocked());
                    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                        @Override
                        public void afterCompletion(int status) {
                            history.add("after " + (status == STATUS_COMMITTED ? "commit" : "rollback")
                                    + ": locked " + lock.isLocked());
                        }
                    });
                });
                assertThat(service.recharge("o1", 100)).isTrue();
                assertThat(history).containsExactly("body: transaction true, locked true", "after commit: locked true");
                assertThat(lock.isLocked()).isFalse();
                assertThat(service.balance()).isEqualTo(100);
            }
        });
    }

    @Test
    void aRollbackToo() {
        runner().run(context -> {
            try (Relock observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                DistributedLock lock = observer.getLock("recharge:o2");
                List<String> history = new ArrayList<>();
                service.onCredit(() -> {
                    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                        @Override
                        public void afterCompletion(int status) {
                            history.add((status == STATUS_ROLLED_BACK ? "rolled back" : "committed") + ": locked "
                                    + lock.isLocked());
                        }
                    });
                    throw new IllegalStateException("payment provider refused");
                });
                assertThatThrownBy(() -> service.recharge("o2", 100)).hasMessage("payment provider refused");
                assertThat(history).containsExactly("rolled back: locked true");
                assertThat(lock.isLocked()).isFalse();
                assertThat(service.balance()).isZero();
            }
        });
    }

    @Test
    void whenTheLockIsNotAcquiredNoTransactionIsOpened() {
        runner().run(context -> {
            try (Relock holder = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                CountingTransactionManager transactions = context.getBean(CountingTransactionManager.class);
                DistributedLock lock = holder.getLock("recharge:o3");
                lock.lock();
                try {
                    assertThatThrownBy(() -> service.rechargeNow("o3", 100)).isInstanceOf(LockNotAcquiredException.class);
                } finally {
                    lock.unlock();
                }
                assertThat(transactions.begun).hasValue(0);
                assertThat(service.rechargeNow("o3", 100)).isTrue();
                assertThat(transactions.begun).hasValue(1);
            }
        });
    }

    @Test
    void tenConcurrentRetriesOnTwoInstancesCreditOnce() throws Exception {
        ApplicationContextRunner runner = runner();
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        runner.run(first -> runner.run(second -> {
            instances.add(first.getSourceApplicationContext());
            instances.add(second.getSourceApplicationContext());
            CountDownLatch start = new CountDownLatch(1);
            List<CompletableFuture<Boolean>> retries = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                RechargeService service = instances.get(i % 2).getBean(RechargeService.class);
                retries.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    return service.recharge("o4", 100);
                }));
            }
            start.countDown();
            int credited = 0;
            for (CompletableFuture<Boolean> retry : retries) {
                credited += retry.get(60, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(credited).isEqualTo(1);
            assertThat(instances.get(0).getBean(RechargeService.class).balance()).isEqualTo(100);
        }));
    }

    @Test
    void aForceUnlockWhileTheMethodRunsRollsItsTransactionBackAndTheCallerGetsLockLost() {
        runner().run(context -> {
            try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                Pause pause = new Pause();
                service.onCredit(pause);
                CompletableFuture<Boolean> call = CompletableFuture.supplyAsync(() -> service.recharge("o5", 100));
                pause.awaitReached();
                assertThat(other.forceUnlock("recharge:o5")).isTrue();
                pause.proceed();
                assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(LockLostException.class)
                        .hasMessageContaining("'recharge:o5' was lost before the transaction committed")
                        .satisfies(lost -> assertThat(((LockLostException) lost).isRolledBack()).isTrue());
                assertThat(service.balance()).isZero();
                assertThat(service.status("o5")).isEqualTo("NEW");
            }
        });
    }

    @Test
    void aFixedLeaseThatRunsOutWhileTheMethodRunsRollsItsTransactionBack() {
        runner().run(context -> {
            try (Relock observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                Pause pause = new Pause();
                service.onCredit(pause);
                CompletableFuture<Boolean> call = CompletableFuture.supplyAsync(() -> service.rechargeLeased("o6", 100));
                pause.awaitReached();
                // Redis ends the lease; the client's own deadline for it is no later.
                Eventually.await(Duration.ofSeconds(30), "the lease of recharge:o6 is over on Redis",
                        () -> !observer.getLock("recharge:o6").isLocked());
                pause.proceed();
                assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(LockLostException.class)
                        .satisfies(lost -> assertThat(((LockLostException) lost).isRolledBack()).isTrue());
                assertThat(service.balance()).isZero();
                assertThat(service.status("o6")).isEqualTo("NEW");
            }
        });
    }

    @Test
    void aTransactionTemplateInsideARelockTemplateCallIsCheckedToo() {
        runner().run(context -> {
            try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RelockTemplate locks = context.getBean(RelockTemplate.class);
                TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
                RechargeService service = context.getBean(RechargeService.class);
                Pause pause = new Pause();
                service.onCredit(pause);
                CompletableFuture<Void> call = CompletableFuture.runAsync(() -> locks.run("recharge:o7",
                        Duration.ofSeconds(30), () -> transactions.executeWithoutResult(status -> service.credit("o7", 100))));
                pause.awaitReached();
                assertThat(other.forceUnlock("recharge:o7")).isTrue();
                pause.proceed();
                assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(LockLostException.class)
                        .satisfies(lost -> assertThat(((LockLostException) lost).isRolledBack()).isTrue());
                assertThat(service.balance()).isZero();

                service.onCredit(() -> { });
                locks.run("recharge:o7", Duration.ofSeconds(30),
                        () -> transactions.executeWithoutResult(status -> service.credit("o7", 100)));
                assertThat(service.balance()).isEqualTo(100);
            }
        });
    }

    @Test
    void whileItsLockIsHeldATransactionCommitsUnderEveryLockType() {
        runner().run(context -> {
            RelockTemplate locks = context.getBean(RelockTemplate.class);
            TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
            List<List<String>> names = List.of(List.of("kinds"), List.of("kinds:a", "kinds:b"));
            for (WithLock.Type type : WithLock.Type.values()) {
                for (List<String> each : names) {
                    locks.run(type, each, Duration.ofSeconds(30), null, () -> transactions.executeWithoutResult(
                            status -> jdbc.update("UPDATE account SET balance = balance + 1 WHERE id = 'alice'")));
                }
            }
            assertThat(context.getBean(RechargeService.class).balance()).isEqualTo(2L * WithLock.Type.values().length);
        });
    }

    @Test
    void whenRedisDoesNotAnswerTheCheckTheLeaseTheClientStillBelievesInLetsTheTransactionCommit() {
        try (FaultProxy proxy = FaultProxy.to(server)) {
            runner().withPropertyValues("spring.data.redis.url=" + proxy.uri(), "relock.command-timeout=500ms")
                    .run(context -> {
                        RechargeService service = context.getBean(RechargeService.class);
                        Pause pause = new Pause();
                        service.onCredit(pause);
                        CompletableFuture<Boolean> call = CompletableFuture.supplyAsync(() -> service.recharge("o9", 100));
                        pause.awaitReached();
                        proxy.blackhole();
                        pause.proceed();
                        // The commit went through (the watchdog's 30 s lease is far from over); the
                        // release then could not reach Redis, and the caller is told that.
                        assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(RelockException.class)
                                .isNotInstanceOf(LockLostException.class);
                        assertThat(service.balance()).isEqualTo(100);
                        assertThat(service.status("o9")).isEqualTo("PAID");
                    });
        }
    }

    @Test
    void withOnLockLostLogTheTransactionCommitsAndTheLossIsOnlyLogged() {
        runner().withPropertyValues("relock.on-lock-lost=log").run(context -> {
            try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
                RechargeService service = context.getBean(RechargeService.class);
                Pause pause = new Pause();
                service.onCredit(pause);
                CompletableFuture<Boolean> call = CompletableFuture.supplyAsync(() -> service.recharge("o8", 100));
                pause.awaitReached();
                assertThat(other.forceUnlock("recharge:o8")).isTrue();
                pause.proceed();
                assertThat(call.get(60, TimeUnit.SECONDS)).isTrue();
                assertThat(service.balance()).isEqualTo(100);
                assertThat(service.status("o8")).isEqualTo("PAID");
            }
        });
    }

    @Test
    void theReadmesFencedRechargeWritesItsTokenAndALaterHolderChangesNothing() {
        runner().run(context -> {
            RechargeService service = context.getBean(RechargeService.class);
            assertThat(service.rechargeFenced("o1", 100)).isTrue();
            long first = service.fenceToken("o1");
            assertThat(first).isPositive();
            assertThat(service.rechargeFenced("o1", 100)).isFalse();
            assertThat(service.balance()).isEqualTo(100);
            assertThat(service.fenceToken("o1")).isEqualTo(first);
        });
    }

    /** A probe that stops the method inside its transaction until the test lets it go on. */
    static final class Pause implements Runnable {

        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch proceed = new CountDownLatch(1);

        @Override
        public void run() {
            reached.countDown();
            try {
                if (!proceed.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method go on");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        void awaitReached() throws InterruptedException {
            assertThat(reached.await(60, TimeUnit.SECONDS)).as("the method reached its probe").isTrue();
        }

        void proceed() {
            proceed.countDown();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Recharge {

        /** A connection per transaction, no pool: nothing to close, and either database's driver. */
        @Bean
        DataSource dataSource(org.springframework.core.env.Environment environment) {
            return new DriverManagerDataSource(environment.getRequiredProperty("test.database"));
        }

        @Bean
        CountingTransactionManager transactionManager(DataSource dataSource) {
            return new CountingTransactionManager(dataSource);
        }

        @Bean
        RechargeService rechargeService(DataSource dataSource) {
            return new RechargeService(new JdbcTemplate(dataSource));
        }
    }

    static class CountingTransactionManager extends DataSourceTransactionManager {

        private static final long serialVersionUID = 1L;

        final transient AtomicInteger begun = new AtomicInteger();

        CountingTransactionManager(DataSource dataSource) {
            super(dataSource);
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            begun.incrementAndGet();
            super.doBegin(transaction, definition);
        }
    }

    /** Seed 000's recharge: credit an order's amount once, however often the request is retried. */
    static class RechargeService {

        private final JdbcTemplate jdbc;
        private volatile Runnable inside = () -> { };

        RechargeService(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @WithLock(name = "recharge", key = "#orderId", waitTime = "30s")
        @Transactional
        public boolean recharge(String orderId, long amount) {
            return credit(orderId, amount);
        }

        @WithLock(name = "recharge", key = "#orderId", waitTime = "0")
        @Transactional
        public boolean rechargeNow(String orderId, long amount) {
            return credit(orderId, amount);
        }

        /** A fixed lease, short for the test: not renewed, it runs out while the method waits on its probe. */
        @WithLock(name = "recharge", key = "#orderId", waitTime = "30s", leaseTime = "500ms")
        @Transactional
        public boolean rechargeLeased(String orderId, long amount) {
            return credit(orderId, amount);
        }

        /** The fenced recharge of docs/spring.md, as written there. */
        @WithLock(name = "recharge", key = "#orderId", type = WithLock.Type.FENCED, waitTime = "5s")
        @Transactional
        public boolean rechargeFenced(String orderId, long amount) {
            long token = RelockLocks.current().token();
            int marked = jdbc.update("UPDATE orders SET status = 'PAID', fence_token = ?"
                    + " WHERE id = ? AND status = 'NEW' AND fence_token < ?", token, orderId, token);
            if (marked == 0) {
                return false; // paid already, or a newer holder has written: change nothing
            }
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, accountOf(orderId));
            return true;
        }

        private String accountOf(String orderId) {
            return "alice";
        }

        boolean credit(String orderId, long amount) {
            // The seed's check-then-act: nothing but the lock keeps two retries from both seeing NEW.
            String status = jdbc.queryForObject("SELECT status FROM orders WHERE id = ?", String.class, orderId);
            if (!"NEW".equals(status)) {
                return false;
            }
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = 'alice'", amount);
            jdbc.update("UPDATE orders SET status = 'PAID' WHERE id = ?", orderId);
            inside.run();
            return true;
        }

        /** Code to run inside the transaction, after the credit: the test's probe. */
        public void onCredit(Runnable probe) {
            inside = probe;
        }

        public long balance() {
            return jdbc.queryForObject("SELECT balance FROM account WHERE id = 'alice'", Long.class);
        }

        public long fenceToken(String orderId) {
            return jdbc.queryForObject("SELECT fence_token FROM orders WHERE id = ?", Long.class, orderId);
        }

        public String status(String orderId) {
            return jdbc.queryForObject("SELECT status FROM orders WHERE id = ?", String.class, orderId);
        }
    }
}
