package com.example.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.relock.Relock;
import io.relock.spring.boot.LocksEndpoint;
import io.relock.spring.boot.RelockHealthIndicator;
import io.relock.testkit.RedisExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter on Spring Boot 4.1 through relock-bom, without Boot's parent: the lock around the
 * job, the locks endpoint, the relock health indicator and the meters.
 */
@SpringBootTest
class JobsApplicationTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @DynamicPropertySource
    static void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> redis.server().uri());
    }

    @Autowired
    private NightlyJob job;

    @Autowired
    private Relock relock;

    @Autowired
    private LocksEndpoint locksEndpoint;

    @Autowired
    private RelockHealthIndicator health;

    @Autowired
    private MeterRegistry meterRegistry;

    @Test
    void theJobRunsUnderItsLockAndTheActuatorAndMetersSeeTheClient() {
        assertThat(job.run("tenant-7")).isTrue();

        assertThat(meterRegistry.get("relock.lock.hold").tag("lock", "nightly:tenant-7").timer().count()).isEqualTo(1);
        assertThat(locksEndpoint.locks().clientId()).isEqualTo(relock.clientId());
        assertThat(locksEndpoint.locks().heldLocks()).isEmpty();
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }
}
