package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.jdbc.LeaseCheck;
import io.relock.testkit.PostgresServer;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.relock.spring.RelockTemplate;

/**
 * {@code relock.store=jdbc}: the starter's client on the application's {@code DataSource}, on a
 * PostgreSQL server the test starts; the {@code relock.*} settings apply, and no Redis is needed.
 */
class DatabaseStoreTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.launch();
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, RelockAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + postgres.createDatabase(), "relock.store=jdbc",
                        "relock.jdbc.create-table=true", "relock.jdbc.table=app_locks", "relock.watchdog-timeout=7s");
    }

    @Test
    void theClientKeepsItsLocksInTheApplicationsDatabase() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            Relock relock = context.getBean(Relock.class);
            assertThat(LeaseCheck.appliesTo(relock)).isTrue();
            assertThat(relock.config().watchdogTimeout()).isEqualTo(Duration.ofSeconds(7));
            DistributedLock lock = relock.getLock("order:42");
            assertThat(context.getBean(RelockTemplate.class)).isNotNull();
            lock.lock();
            try {
                assertThat(relock.getLockInfo("order:42").isLocked()).isTrue();
            } finally {
                lock.unlock();
            }
            assertThat(new org.springframework.jdbc.core.JdbcTemplate(context.getBean(javax.sql.DataSource.class))
                    .queryForObject("SELECT count(*) FROM app_locks", Integer.class)).isEqualTo(1);
        });
    }

    @Test
    void aMissingTableFailsTheStartWithTheDdlsName() {
        runner().withPropertyValues("relock.jdbc.create-table=false").run(context ->
                assertThat(context).hasFailed().getFailure().hasStackTraceContaining("RelockException")
                        .hasStackTraceContaining("the lock table 'app_locks' is missing")
                        .hasStackTraceContaining("RelockJdbc.ddl"));
    }
}
