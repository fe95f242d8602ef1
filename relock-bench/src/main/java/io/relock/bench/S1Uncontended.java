package io.relock.bench;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * S1, uncontended: every thread locks and unlocks its own lock name in a loop, so no one ever
 * waits. Measures cycles/s, cycle latency, round trips and Redis commands per cycle, and the
 * client JVM's CPU per cycle.
 *
 * <p>{@code S1/t64m} is {@code S1/t64} with the library's own Micrometer lock metrics bound to a
 * {@link SimpleMeterRegistry} (Relock: {@code RelockMetrics}); the report sets it beside
 * {@code S1/t64} of the same worker, which shows what observing every acquire and release costs
 * (the two swap places in odd repeats).
 * A library without such metrics reports the case as not available.
 */
final class S1Uncontended implements Scenario {

    /** The metered variant of {@link #PLAIN_CASE}. */
    static final String METERED_CASE = "S1/t64m";
    static final String PLAIN_CASE = "S1/t64";

    @Override
    public String id() {
        return "S1";
    }

    @Override
    public String title() {
        return "uncontended lock(); unlock(), each thread its own lock name";
    }

    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of("S1/t1", PLAIN_CASE, METERED_CASE)
                : List.of("S1/t1", "S1/t8", PLAIN_CASE, METERED_CASE);
    }

    /** Only Relock has Micrometer metrics of its locks to bind. */
    @Override
    public String without(String caseId, Library library) {
        return caseId.equals(METERED_CASE) && library != Library.RELOCK ? "no Micrometer metrics of its locks" : null;
    }

    /** In odd repeats the metered case runs before the plain one, so JIT warmth favours neither. */
    @Override
    public List<String> order(List<String> cases, int repeat) {
        int plain = cases.indexOf(PLAIN_CASE);
        int metered = cases.indexOf(METERED_CASE);
        if (repeat % 2 == 0 || plain < 0 || metered < 0) {
            return cases;
        }
        List<String> swapped = new ArrayList<>(cases);
        swapped.set(plain, METERED_CASE);
        swapped.set(metered, PLAIN_CASE);
        return List.copyOf(swapped);
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) throws Exception {
        boolean metered = caseId.endsWith("m");
        int threads = Integer.parseInt(caseId.substring("S1/t".length(), caseId.length() - (metered ? 1 : 0)));
        CaseResult result = new CaseResult(caseId, "S1 uncontended, " + threads + (threads == 1 ? " thread" : " threads")
                + (metered ? ", with lock metrics (SimpleMeterRegistry)" : ""));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LockLibrary client = context.connect()) {
            Optional<AutoCloseable> metrics = metered ? client.bindMetrics(registry) : Optional.empty();
            if (metered && metrics.isEmpty()) {
                return result.unavailable("no Micrometer metrics of its locks");
            }
            try {
                Lock[] locks = new Lock[threads];
                for (int i = 0; i < threads; i++) {
                    locks[i] = client.lock("bench:s1:" + i);
                }
                Load.Outcome outcome = Load.run(threads, worker -> {
                    Lock lock = locks[worker.index];
                    long start = System.nanoTime();
                    lock.lock();
                    lock.unlock();
                    return System.nanoTime() - start;
                }, context.timing(), List.of(context.admin()));
                if (metered) {
                    // Every acquire of the warm-up, the window and the counting phase, as the meters saw them.
                    result.detail("metered_acquires", registry.find("relock.lock.wait").timers().stream()
                            .mapToLong(Timer::count).sum());
                }
                return result.load(outcome, Metric.CYCLES_PER_S, Metric.CYCLE_P50_US, Metric.CYCLE_P99_US);
            } finally {
                if (metrics.isPresent()) {
                    metrics.get().close();
                }
            }
        }
    }
}
