package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.WithLock;

/**
 * A Spring Boot application as users start one: the auto-configuration is found through its
 * imports file, next to Boot's own Redis, DataSource and transaction auto-configuration, and the
 * lock still wraps the transaction.
 */
class SpringApplicationTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void anAutoConfiguredApplicationGetsTheClientAndTheLockOutsideTheTransaction(RedisServer server) {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("spring.data.redis.url=" + server.uri(), "spring.datasource.url=jdbc:h2:mem:app",
                        "spring.main.banner-mode=off")
                .run();
                Relock observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            assertThat(context.getBeansOfType(Relock.class)).hasSize(1);
            Ledger ledger = context.getBean(Ledger.class);
            List<String> history = ledger.post("e1", observer);
            assertThat(history).containsExactly("body: transaction true, locked true", "after commit: locked true");
            assertThat(observer.getLock("ledger:e1").isLocked()).isFalse();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Ledger ledger(JdbcTemplate jdbc) {
            return new Ledger(jdbc);
        }
    }

    static class Ledger {

        private final JdbcTemplate jdbc;

        Ledger(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @WithLock(name = "ledger", key = "#entry")
        @Transactional
        public List<String> post(String entry, Relock observer) {
            List<String> history = new ArrayList<>();
            jdbc.execute("CREATE TABLE IF NOT EXISTS entries (id VARCHAR(20))");
            jdbc.update("INSERT INTO entries VALUES (?)", entry);
            boolean locked = observer.getLock("ledger:" + entry).isLocked();
            history.add("body: transaction " + TransactionSynchronizationManager.isActualTransactionActive()
                    + ", locked " + locked);
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    history.add("after commit: locked " + observer.getLock("ledger:" + entry).isLocked());
                }
            });
            return history;
        }
    }
}
