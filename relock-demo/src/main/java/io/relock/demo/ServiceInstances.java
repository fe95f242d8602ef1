package io.relock.demo;

import com.zaxxer.hikari.HikariDataSource;
import io.r2dbc.spi.ConnectionFactory;
import io.relock.Relock;
import io.relock.spring.boot.RelockAutoConfiguration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * Several instances of the recharge service, as a fleet runs them: each a Spring application
 * context of its own, with its own Relock client (from Spring Boot's Redis settings, through
 * Relock's auto-configuration), its own connection pool and transaction manager, all on the
 * same Redis and the same database. They run in the demo's JVM only to keep the demo one
 * command; they share nothing but Redis and the database. On the demo's own H2 each instance
 * also runs the reactive service, on R2DBC connections and a reactive transaction manager of
 * its own.
 */
final class ServiceInstances implements AutoCloseable {

    /** Connections per instance: enough for every retry one instance runs at a time. */
    private static final int POOL_SIZE = 10;

    private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();

    /** What an instance is configured with; a bean of each context. */
    record Settings(String name, RechargeDatabase database) {}

    private ServiceInstances() {}

    /**
     * Starts {@code count} instances.
     *
     * @param redis the run's Redis; lock keys go under its key prefix
     * @param database the run's database
     */
    static ServiceInstances start(int count, DemoRedis redis, RechargeDatabase database) {
        ServiceInstances instances = new ServiceInstances();
        try {
            for (int i = 1; i <= count; i++) {
                instances.contexts.add(startOne("instance-" + i, redis, database));
            }
        } catch (RuntimeException e) {
            instances.close();
            throw e;
        }
        return instances;
    }

    private static AnnotationConfigApplicationContext startOne(String name, DemoRedis redis, RechargeDatabase database) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.setDisplayName(name);
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("relock-demo", Map.of(
                "spring.data.redis.url", redis.uri(),
                "relock.key-prefix", redis.keyPrefix())));
        context.registerBean(Settings.class, () -> new Settings(name, database));
        context.register(Application.class);
        if (database.reactive()) {
            context.register(ReactiveApplication.class);
        }
        context.refresh();
        return context;
    }

    /** How many instances there are. */
    int size() {
        return contexts.size();
    }

    /** The service of instance {@code index} (from 0), through its Spring proxies. */
    RechargeService service(int index) {
        return contexts.get(index).getBean(RechargeService.class);
    }

    /**
     * The reactive service of instance {@code index} (from 0), through its Spring proxies.
     *
     * @throws IllegalStateException if the database has no reactive service ({@link RechargeDatabase#reactive()})
     */
    ReactiveRechargeService reactiveService(int index) {
        AnnotationConfigApplicationContext context = contexts.get(index);
        if (!context.containsBean("reactiveRechargeService")) {
            throw new IllegalStateException("no reactive service on " + context.getDisplayName()
                    + ": R2DBC reaches only the demo's own H2");
        }
        return context.getBean(ReactiveRechargeService.class);
    }

    /** Closes every instance: its Relock client, its pool. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (AnnotationConfigApplicationContext context : contexts) {
            try {
                context.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        contexts.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * One instance of the service: what a Spring Boot application with Relock's starter and
     * Spring JDBC would configure, spelled out. Redis from {@code spring.data.redis.url}, the
     * {@link Relock} bean and {@code @WithLock} from Relock's auto-configuration.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @ImportAutoConfiguration({DataRedisAutoConfiguration.class, RelockAutoConfiguration.class})
    static class Application {

        @Bean(destroyMethod = "close")
        HikariDataSource dataSource(Settings settings) {
            return settings.database().newPool("relock-demo-" + settings.name(), POOL_SIZE);
        }

        @Bean
        CommitLatency transactionManager(HikariDataSource dataSource, Settings settings) {
            return new CommitLatency(dataSource, settings.database().commitLatency());
        }

        @Bean
        RechargeService rechargeService(HikariDataSource dataSource, Relock relock, Settings settings) {
            return new RechargeService(new JdbcTemplate(dataSource), relock, settings.database().tables());
        }
    }

    /**
     * The reactive part of an instance, on the demo's own H2: what a WebFlux application with
     * Relock's starter, relock-reactor and Spring R2DBC would configure. Its transaction manager
     * is no default candidate, so that the JDBC methods' plain {@code @Transactional} keeps
     * finding the JDBC one; the reactive method names it.
     */
    @Configuration(proxyBeanMethods = false)
    static class ReactiveApplication {

        @Bean
        ConnectionFactory reactiveConnections(Settings settings) {
            return settings.database().newReactiveConnections();
        }

        @Bean(name = ReactiveRechargeService.TRANSACTION_MANAGER, defaultCandidate = false)
        ReactiveCommitLatency reactiveTransactionManager(ConnectionFactory reactiveConnections, Settings settings) {
            return new ReactiveCommitLatency(reactiveConnections, settings.database().commitLatency());
        }

        @Bean
        ReactiveRechargeService reactiveRechargeService(ConnectionFactory reactiveConnections, Settings settings) {
            return new ReactiveRechargeService(DatabaseClient.create(reactiveConnections), settings.database().tables());
        }
    }
}
