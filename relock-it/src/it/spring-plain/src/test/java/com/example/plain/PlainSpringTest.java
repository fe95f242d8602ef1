package com.example.plain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.DistributedLock;
import io.relock.LockNotAcquiredException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.spring.RelockLeadership;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * The application as a plain Spring user starts it (no Spring Boot on the class path): an
 * AnnotationConfigApplicationContext of LockConfig, on a Redis server from relock-testkit.
 */
class PlainSpringTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration ELECTED = Duration.ofSeconds(30);

    private static AnnotationConfigApplicationContext start() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources()
                .addFirst(new MapPropertySource("test", Map.of("redis.uri", redis.server().uri())));
        context.register(LockConfig.class);
        context.refresh();
        return context;
    }

    @Test
    void aWithLockMethodRunsUnderItsLockAndFailsWhileAnotherClientHoldsIt() {
        try (AnnotationConfigApplicationContext context = start();
                Relock other = Relock.create(RelockConfig.builder().singleServer(redis.server().uri()).build())) {
            assertThatThrownBy(() -> Class.forName("org.springframework.boot.SpringApplication"))
                    .as("Spring Boot is not on the class path").isInstanceOf(ClassNotFoundException.class);
            RechargeService service = context.getBean(RechargeService.class);

            assertThat(service.recharge("42", 100)).isEqualTo(List.of("recharge:42"));
            assertThat(other.getLock("recharge:42").isLocked()).isFalse();

            DistributedLock held = other.getLock("recharge:43");
            held.lock();
            try {
                assertThatThrownBy(() -> service.recharge("43", 100)).isInstanceOf(LockNotAcquiredException.class);
            } finally {
                held.unlock();
            }
            assertThat(service.recharge("43", 100)).isEqualTo(List.of("recharge:43"));
        }
    }

    @Test
    void aLeaderOnlyMethodRunsOnTheLeaderAndIsSkippedOnTheOtherInstance() {
        try (AnnotationConfigApplicationContext first = start()) {
            RelockLeadership firstLeadership = first.getBean(RelockLeadership.class);
            Eventually.await(ELECTED, "the first instance leads", () -> firstLeadership.isLeader("reports"));
            try (AnnotationConfigApplicationContext second = start()) {
                assertThat(second.getBean(RelockLeadership.class).names()).containsExactly("reports");
                assertThat(second.getBean(RelockLeadership.class).isLeader("reports")).isFalse();

                assertThat(first.getBean(ReportJob.class).sendReport()).isEqualTo(1);
                assertThat(second.getBean(ReportJob.class).sendReport()).isNull();

                first.close();
                Eventually.await(ELECTED, "the second instance leads once the first closed",
                        () -> second.getBean(RelockLeadership.class).isLeader("reports"));
                assertThat(second.getBean(ReportJob.class).sendReport()).isEqualTo(1);
            }
        }
    }
}
