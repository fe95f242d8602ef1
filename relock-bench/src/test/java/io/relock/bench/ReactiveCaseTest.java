package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * S7, the reactive case, in this JVM with a short window (no worker JVM): 1 000 subscriptions
 * over 4 clients on one name through Relock's {@code ReactiveLock}. Asserts that it runs to the
 * end without an error, that mutual exclusion held (both checks 0), and that every figure the
 * report reads is there; never a timing. Relock only: with 1 000 waiters every pause of the
 * phases drains the queue, about 1.5 s per pause at Redisson's rate, and the bench run itself
 * runs Redisson's side.
 */
class ReactiveCaseTest {

    /** Short phases: the case's cost here is mostly the clients' start and the drains. */
    private static final Load.Timing TIMING = new Load.Timing(Duration.ofMillis(300), Duration.ofMillis(700),
            Duration.ofMillis(100));

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void thousandSubscriptionsOverFourRelockClientsKeepMutualExclusion() throws Exception {
        Library library = Library.RELOCK;
        Map<String, Object> json;
        try (RedisServer server = RedisServer.start(); RedisAdmin admin = new RedisAdmin(server.uri())) {
            WorkerContext context = new WorkerContext(library, server.uri(), admin, List.of(), List.of(), TIMING,
                    "512m");
            json = new S7Reactive().run(S7Reactive.CASE, context).toJson(library);
        }
        String what = library + " " + json;
        assertThat(json.get("error")).as(what).isNull();
        assertThat(json.get("unavailable")).as(what).isNull();
        assertThat(Json.object(json.get("checks"))).as(what).containsEntry("overlaps", 0L)
                .containsEntry("lost_updates", 0L);
        Map<String, Object> metrics = Json.object(json.get("metrics"));
        for (Metric metric : List.of(Metric.ACQUISITIONS_PER_S, Metric.WAIT_P50_US, Metric.WAIT_P99_US,
                Metric.WAIT_MAX_MS, Metric.COMMANDS_PER_OP, Metric.ROUND_TRIPS_PER_OP)) {
            assertThat(((Number) metrics.get(metric.key())).doubleValue()).as(metric + " " + what).isPositive();
        }
        assertThat(metrics).as(what).containsKeys(Metric.PIPELINE_SHARE_MIN.key(), Metric.PIPELINE_SHARE_MAX.key());
        // The clients' threads: each client has some, and no subscription has one.
        assertThat(((Number) metrics.get(Metric.THREADS_USED.key())).longValue()).as(what).isBetween(1L, 999L);
        Map<String, Object> details = Json.object(json.get("details"));
        assertThat(((Number) details.get("acquisitions_all_phases")).longValue()).as(what)
                .isGreaterThanOrEqualTo(((Number) details.get("ops")).longValue());
        assertThat(details).as(what).containsEntry("subscriptions", 1000).containsEntry("client_instances", 4);
    }
}
