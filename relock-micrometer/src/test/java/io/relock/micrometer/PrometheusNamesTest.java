package io.relock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The meters as a Prometheus scrape names them. */
class PrometheusNamesTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void theScrapeHasTheExpectedNamesAndLabels(RedisServer server) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Relock relock = Relock.create(RelockConfig.builder()
                        .singleServer(server.uri())
                        .watchdogTimeout(Duration.ofMillis(1500))
                        .build());
                RelockMetrics metrics = new RelockMetrics(relock)) {
            metrics.bindTo(registry);
            DistributedLock lock = relock.getLock("invoice:7");
            lock.lock();
            lock.unlock();
            lock.lock();
            server.command("DEL", "invoice:7");
            Eventually.await(Duration.ofSeconds(10), "the loss scraped",
                    () -> registry.scrape().contains("relock_lock_lost_total{cause=\"expired\",lock=\"invoice:7\"} 1.0"));
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
            relock.getLock("invoice:7").forceUnlock();

            String scrape = registry.scrape();
            assertThat(scrape)
                    .contains("relock_lock_wait_seconds_count{lock=\"invoice:7\",outcome=\"acquired\",type=\"reentrant\"} 2")
                    .contains("relock_lock_wait_seconds_sum{lock=\"invoice:7\",outcome=\"acquired\",type=\"reentrant\"}")
                    .contains("relock_lock_hold_seconds_count{lock=\"invoice:7\",outcome=\"released\",type=\"reentrant\"} 1")
                    .contains("relock_lock_hold_seconds_count{lock=\"invoice:7\",outcome=\"lost\",type=\"reentrant\"} 1")
                    .contains("relock_lock_active_seconds_count{lock=\"invoice:7\",type=\"reentrant\"} 0")
                    .contains("relock_lock_lost_total{cause=\"expired\",lock=\"invoice:7\"} 1.0")
                    .contains("relock_lock_force_unlocks_total{lock=\"invoice:7\",removed=\"false\",type=\"reentrant\"} 1.0")
                    .contains("relock_watchdog_renewals_total{outcome=\"lost\"} 1.0")
                    .contains("relock_watchdog_lag_seconds_count ")
                    .contains("# HELP relock_lock_wait_seconds Time an acquire took");
        }
    }
}
