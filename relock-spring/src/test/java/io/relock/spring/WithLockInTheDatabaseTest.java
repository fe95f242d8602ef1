package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.jdbc.RelockJdbc;
import io.relock.testkit.PostgresServer;
import java.util.List;
import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@code @WithLock} with {@code @Transactional} when the lock lives in the same PostgreSQL
 * database as the data (relock-jdbc): the lease is read in the committing transaction and its
 * row stays locked until the commit. History checked: a charge commits only while its caller
 * holds the lock; one whose lock was taken from it rolls back with {@link LockLostException}.
 */
class WithLockInTheDatabaseTest {

    private static PostgresServer postgres;
    private static String url;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.launch();
        url = postgres.createDatabase();
        new JdbcTemplate(DataSourceBuilder.create().url(url).build())
                .execute("CREATE TABLE charges (order_id VARCHAR(20) NOT NULL)");
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withUserConfiguration(Setup.class, Billing.class);
    }

    @Test
    void aChargeCommitsWhileItsCallerHoldsTheLock() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            billing.charge("o1", () -> { });
            assertThat(billing.charged()).contains("o1");
        });
    }

    @Test
    void aChargeWhoseLockWasTakenFromItRollsBack() {
        runner().run(context -> {
            Billing billing = context.getBean(Billing.class);
            Relock relock = context.getBean(Relock.class);
            // Another client force-unlocks it while the charge runs: the commit must not happen.
            assertThatThrownBy(() -> billing.charge("o2", () -> {
                try (Relock operator = RelockJdbc.builder(context.getBean(DataSource.class)).build()) {
                    assertThat(operator.forceUnlock("charge:o2")).isTrue();
                }
            })).isInstanceOf(LockLostException.class).satisfies(e ->
                    assertThat(((LockLostException) e).isRolledBack()).isTrue());
            assertThat(billing.charged()).doesNotContain("o2");
            assertThat(relock.getLockInfo("charge:o2").isLocked()).isFalse();
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableRelock(proxyTargetClass = true)
    @EnableTransactionManagement
    static class Setup {

        @Bean
        DataSource dataSource() {
            return DataSourceBuilder.create().url(url).build();
        }

        @Bean(destroyMethod = "close")
        Relock relock(DataSource dataSource) {
            return RelockJdbc.builder(dataSource).createTable(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    static class Billing {

        private final JdbcTemplate jdbc;

        Billing(DataSource dataSource) {
            this.jdbc = new JdbcTemplate(dataSource);
        }

        @WithLock(name = "charge", key = "#orderId", waitTime = "5s")
        @Transactional
        public void charge(String orderId, Runnable during) {
            jdbc.update("INSERT INTO charges (order_id) VALUES (?)", orderId);
            during.run();
        }

        List<String> charged() {
            return jdbc.queryForList("SELECT order_id FROM charges", String.class);
        }
    }
}
