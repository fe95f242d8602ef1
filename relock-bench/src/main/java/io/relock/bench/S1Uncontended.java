package io.relock.bench;

import java.util.List;
import java.util.concurrent.locks.Lock;

/**
 * S1, uncontended: every thread locks and unlocks its own lock name in a loop, so no one ever
 * waits. Measures cycles/s, cycle latency, round trips and Redis commands per cycle, and the
 * client JVM's CPU per cycle.
 */
final class S1Uncontended implements Scenario {

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
        return quick ? List.of("S1/t1", "S1/t64") : List.of("S1/t1", "S1/t8", "S1/t64");
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        int threads = Integer.parseInt(caseId.substring("S1/t".length()));
        CaseResult result = new CaseResult(caseId, "S1 uncontended, " + threads + (threads == 1 ? " thread" : " threads"));
        try (LockLibrary client = context.connect()) {
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
            return result.load(outcome, Metric.CYCLES_PER_S, Metric.CYCLE_P50_US, Metric.CYCLE_P99_US);
        }
    }
}
