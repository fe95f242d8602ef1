package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.RelockLocks;
import io.relock.spring.RelockTemplate;
import io.relock.spring.WithLock;

/**
 * {@code relock.default-wait-time}: the wait of {@link WithLock} methods and {@link RelockTemplate}
 * calls that give none, while one that gives its own keeps it; and the template's two forms, for
 * actions that return a value and for actions that return nothing, as docs/spring.md writes them.
 */
class DefaultWaitTimeTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private RedisServer server;
    private Relock other;

    @BeforeEach
    void connect(RedisServer server) {
        this.server = server;
        this.other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void close() {
        other.close();
    }

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + server.uri())
                .withPropertyValues(properties)
                .withUserConfiguration(NightlyConfig.class);
    }

    @Test
    void callsWithoutAWaitTimeWaitTheDefaultAndCallsWithOneKeepTheirs() {
        runner("relock.default-wait-time=200ms").run(context -> {
            Nightly nightly = context.getBean(Nightly.class);
            RelockTemplate template = context.getBean(RelockTemplate.class);
            assertThat(template.defaultWaitTime()).isEqualTo(Duration.ofMillis(200));
            DistributedLock taken = other.getLock("nightly");
            taken.lock();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(nightly::run).isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ofMillis(200)));
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(200);
                assertThatThrownBy(() -> template.run("nightly", nightly::count)).isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ofMillis(200)));
                assertThatThrownBy(() -> template.execute("nightly", Duration.ZERO, () -> "never"))
                        .isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ZERO));
                assertThatThrownBy(nightly::runNow).isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ZERO));
                assertThat(nightly.runs()).isEmpty();
            } finally {
                taken.unlock();
            }
            nightly.run();
            assertThat(nightly.runs()).containsExactly("run");
        });
    }

    @Test
    void withoutADefaultACallWithoutAWaitTimeWaitsUntilAcquired() {
        runner().run(context -> {
            RelockTemplate template = context.getBean(RelockTemplate.class);
            assertThat(template.defaultWaitTime()).isNull();
            assertThat(template.execute("nightly", () -> RelockLocks.current().lockNames())).containsExactly("nightly");
        });
    }

    @Test
    void theTemplatesReadmeFormsCompileAndRunForBothKindsOfAction() {
        runner().run(context -> {
            RelockTemplate template = context.getBean(RelockTemplate.class);
            Ledger ledger = new Ledger();
            String orderId = "o1";
            // As docs/spring.md writes them: execute for a value, run for an action that returns nothing.
            long balance = template.execute("recharge:" + orderId, Duration.ofSeconds(5), () -> ledger.credit(orderId));
            template.run("recharge:" + orderId, Duration.ofSeconds(5), () -> ledger.markPaid(orderId));
            assertThat(balance).isEqualTo(100);
            assertThat(ledger.events).containsExactly("credit o1 under [recharge:o1]", "paid o1 under [recharge:o1]");
            assertThat(other.getLock("recharge:o1").isLocked()).isFalse();
        });
    }

    @Test
    void aNegativeDefaultIsOneAttemptAsInCore() {
        runner("relock.default-wait-time=-1s").run(context -> {
            Nightly nightly = context.getBean(Nightly.class);
            assertThat(context.getBean(RelockTemplate.class).defaultWaitTime()).isEqualTo(Duration.ZERO);
            DistributedLock taken = other.getLock("nightly");
            taken.lock();
            try {
                // Were it a wait until acquired, the call would block while the lock stays taken.
                assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThatThrownBy(nightly::run)
                        .isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ZERO)));
                assertThat(nightly.runs()).isEmpty();
            } finally {
                taken.unlock();
            }
            nightly.run();
            assertThat(nightly.runs()).containsExactly("run");
        });
    }

    /** Records what ran under which lock; returns a value from one method and nothing from the other. */
    static final class Ledger {
        final List<String> events = new ArrayList<>();

        long credit(String orderId) {
            events.add("credit " + orderId + " under " + RelockLocks.current().lockNames());
            return 100;
        }

        void markPaid(String orderId) {
            events.add("paid " + orderId + " under " + RelockLocks.current().lockNames());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NightlyConfig {
        @Bean
        Nightly nightly() {
            return new Nightly();
        }
    }

    static class Nightly {
        // Read through runs(): the bean is a class proxy, whose own fields are not the target's.
        private final List<String> runs = new ArrayList<>();

        public List<String> runs() {
            return runs;
        }

        @WithLock(name = "nightly")
        public void run() {
            runs.add("run");
        }

        @WithLock(name = "nightly", waitTime = "0")
        public void runNow() {
            runs.add("runNow");
        }

        public int count() {
            return runs.size();
        }
    }
}
