package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.WithLock;

/**
 * The ShedLock use case: three application contexts in one JVM (three "nodes", each with its own
 * Relock client and scheduler) run the same {@code @Scheduled(fixedRate = 1000)} job under
 * {@code @WithLock(onNotAcquired = SKIP, waitTime = "0")}, their first triggers 0, 150 and 300 ms
 * after a common start, the job taking 50 ms. Without {@code holdAtLeast} the first node's
 * release comes long before the next node's trigger, so most periods run it two or three times;
 * with {@code holdAtLeast = "900ms"} the lock outlives the later triggers of its period and is free
 * again before the next period's first.
 *
 * <p>History checked: every run is counted under its period, {@code (start of run - common start) /
 * 1 s}, from a counter all three contexts share; the 20 periods after all three contexts are
 * up are checked once the next one has begun: exactly one run each with {@code holdAtLeast}, and more than 20 runs in all (over one
 * per period on average) without it.
 *
 * <p>The same with the locks on ZooKeeper ({@code relock.store=zookeeper}, a real server the test
 * starts): exactly one run in each of 10 periods with {@code holdAtLeast}, where the lock's node
 * stays until the minimum has passed.
 */
class ScheduledOncePerPeriodTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final int PERIODS = 20;
    private static final int ZOOKEEPER_PERIODS = 10;
    private static final long PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long[] OFFSETS_MILLIS = {0, 150, 300};

    /** Runs per period of the scenario running now, shared by the three contexts. */
    static final Map<Integer, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    static volatile long startNanos;

    @Test
    void holdAtLeastMakesTheJobRunOncePerPeriodAndWithoutItTheLaterNodesRunItAgain(RedisServer server) {
        String redisUrl = "spring.data.redis.url=" + server.uri();
        Map<Integer, Integer> released = scenario(redisUrl, "report-released", "", PERIODS);
        Map<Integer, Integer> kept = scenario(redisUrl, "report-kept", "900ms", PERIODS);

        assertThat(released.values().stream().mapToInt(Integer::intValue).sum())
                .as("runs over %s periods without holdAtLeast, by period: %s", PERIODS, released)
                .isGreaterThan(PERIODS);
        assertThat(kept).as("runs by period with holdAtLeast = 900ms").isEqualTo(once(PERIODS));
    }

    @Test
    void onZooKeeperHoldAtLeastMakesTheJobRunOncePerPeriod() throws Exception {
        try (TestingServer zookeeper = new TestingServer(true)) {
            Map<Integer, Integer> kept = scenario("relock.store=zookeeper,relock.zookeeper.connect-string="
                    + zookeeper.getConnectString(), "report-kept", "900ms", ZOOKEEPER_PERIODS);
            assertThat(kept).as("runs by period with holdAtLeast = 900ms").isEqualTo(once(ZOOKEEPER_PERIODS));
        }
    }

    private static Map<Integer, Integer> once(int periods) {
        Map<Integer, Integer> once = new TreeMap<>();
        for (int period = 0; period < periods; period++) {
            once.put(period, 1);
        }
        return once;
    }

    /**
     * Runs the three contexts, with {@code store} (comma-separated properties) saying where the
     * locks are, until the {@code periods} after all three are up have passed; returns the runs of
     * each of those periods, numbered from 0 (0 for a period without a run).
     */
    private Map<Integer, Integer> scenario(String store, String lockName, String holdAtLeast, int periods) {
        RUNS.clear();
        startNanos = System.nanoTime();
        List<ConfigurableApplicationContext> nodes = new ArrayList<>();
        int first;
        try {
            for (long offset : OFFSETS_MILLIS) {
                nodes.add(new SpringApplicationBuilder(Node.class)
                        .web(WebApplicationType.NONE)
                        .properties(store.split(","))
                        .properties("spring.main.banner-mode=off",
                                "job.lock=" + lockName, "job.hold-at-least=" + holdAtLeast, "job.offset=" + offset)
                        .run());
            }
            first = (int) Math.floorDiv(System.nanoTime() - startNanos, PERIOD_NANOS) + 1;
            int last = first + periods - 1;
            Eventually.await(Duration.ofSeconds(periods + 30), "period " + (last + 1) + " begun",
                    () -> RUNS.keySet().stream().anyMatch(period -> period > last));
        } finally {
            nodes.forEach(ConfigurableApplicationContext::close);
        }
        Map<Integer, Integer> byPeriod = new TreeMap<>();
        for (int period = 0; period < periods; period++) {
            AtomicInteger runs = RUNS.get(first + period);
            byPeriod.put(period, runs == null ? 0 : runs.get());
        }
        return byPeriod;
    }

    /**
     * The initial delay of a node whose triggers come {@code offsetMillis} into each period: to
     * the next such moment. Evaluated when the node's scheduled method is registered, shortly
     * before its scheduler starts, so the nodes' triggers keep their offsets however long each
     * context took to start.
     */
    public static long initialDelay(long offsetMillis) {
        long toNext = Math.floorMod(startNanos + TimeUnit.MILLISECONDS.toNanos(offsetMillis) - System.nanoTime(),
                PERIOD_NANOS);
        return TimeUnit.NANOSECONDS.toMillis(toNext);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @ImportAutoConfiguration({DataRedisAutoConfiguration.class, RelockAutoConfiguration.class})
    static class Node {
        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {
        @Scheduled(fixedRate = 1000, initialDelayString = "#{T(io.relock.spring.boot.ScheduledOncePerPeriodTest).initialDelay(${job.offset})}")
        @WithLock(name = "${job.lock}", holdAtLeast = "${job.hold-at-least}", waitTime = "0",
                onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public void report() throws InterruptedException {
            int period = (int) Math.floorDiv(System.nanoTime() - startNanos, PERIOD_NANOS);
            RUNS.computeIfAbsent(period, p -> new AtomicInteger()).incrementAndGet();
            Thread.sleep(50); // the job's work, not a synchronisation
        }
    }
}
