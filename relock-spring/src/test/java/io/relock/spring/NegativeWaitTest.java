package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.DistributedLock;
import io.relock.LockNotAcquiredException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * A negative wait is one attempt, as in core's {@code tryLock} and the Reactor and Kotlin faces:
 * for {@link RelockTemplate}'s calls, its default wait time and {@link WithLock#waitTime()}.
 * While another client holds the lock, each call gives up at once; were a negative wait taken as
 * "until acquired", it would block (the preemptive timeout says so), and before it was refused
 * with an {@link IllegalArgumentException} or a failed start.
 */
class NegativeWaitTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private RedisServer server;
    private Relock relock;
    private Relock other;

    @BeforeEach
    void connect(RedisServer server) {
        this.server = server;
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void close() {
        relock.close();
        other.close();
    }

    /** Runs {@code calls} while {@code other} holds {@code name}, then checks the lock is free again. */
    private void whileTakenByAnother(String name, Executable calls) {
        DistributedLock taken = other.getLock(name);
        taken.lock();
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(10), calls);
        } finally {
            taken.unlock();
        }
    }

    private static void notAcquiredInOneAttempt(Executable call) {
        assertThatThrownBy(call::execute).isInstanceOf(LockNotAcquiredException.class)
                .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ZERO));
    }

    @Test
    void aTemplateCallWithANegativeWaitMakesOneAttempt() {
        try (RelockTemplate template = new RelockTemplate(relock)) {
            AtomicInteger runs = new AtomicInteger();
            whileTakenByAnother("report", () -> {
                notAcquiredInOneAttempt(() -> template.execute("report", Duration.ofSeconds(-1), runs::incrementAndGet));
                notAcquiredInOneAttempt(() -> template.run("report", Duration.ofMillis(-1), runs::incrementAndGet));
            });
            assertThat(runs).hasValue(0);
            assertThat(template.execute("report", Duration.ofSeconds(-1), runs::incrementAndGet)).isEqualTo(1);
        }
    }

    @Test
    void aNegativeDefaultWaitTimeIsOneAttempt() {
        try (RelockTemplate template = new RelockTemplate(relock, true, Duration.ofSeconds(-5))) {
            assertThat(template.defaultWaitTime()).isEqualTo(Duration.ZERO);
            whileTakenByAnother("report", () -> notAcquiredInOneAttempt(() -> template.execute("report", () -> "ran")));
            assertThat(template.execute("report", () -> "ran")).isEqualTo("ran");
        }
    }

    @Test
    void aWithLockMethodWithANegativeWaitTimeMakesOneAttempt() {
        new ApplicationContextRunner().withUserConfiguration(TestRelock.class, ReportConfig.class)
                .withPropertyValues("test.redis.uri=" + server.uri())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Report report = context.getBean(Report.class);
                    whileTakenByAnother("report", () -> notAcquiredInOneAttempt(report::send));
                    assertThat(report.sent()).isZero();
                    report.send();
                    assertThat(report.sent()).isEqualTo(1);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class ReportConfig {
        @Bean
        Report report() {
            return new Report();
        }
    }

    static class Report {
        // Read through sent(): the bean is a class proxy, whose own fields are not the target's.
        private final AtomicInteger sent = new AtomicInteger();

        @WithLock(name = "report", waitTime = "-1s")
        public void send() {
            sent.incrementAndGet();
        }

        public int sent() {
            return sent.get();
        }
    }
}
