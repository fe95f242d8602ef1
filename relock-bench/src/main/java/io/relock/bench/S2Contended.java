package io.relock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

/**
 * S2, contended: T threads in each of C independent clients (T × C threads) take turns on ONE
 * lock name. The critical section checks mutual exclusion two ways: an overlap detector (no
 * other thread inside) and a counter incremented without atomicity (no lost update). Both must
 * stay at zero. Measures acquisitions/s, the wait in {@code lock()}, how evenly threads got the
 * lock, and commands per acquisition.
 */
final class S2Contended implements Scenario {

    @Override
    public String id() {
        return "S2";
    }

    @Override
    public String title() {
        return "contended: T threads in each of C clients on one lock name";
    }

    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of("S2/t2x4", "S2/t8x4")
                : List.of("S2/t2x1", "S2/t8x1", "S2/t32x1", "S2/t2x4", "S2/t8x4", "S2/t32x4");
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        String[] shape = caseId.substring("S2/t".length()).split("x");
        int threadsPerClient = Integer.parseInt(shape[0]);
        int clientCount = Integer.parseInt(shape[1]);
        int threads = threadsPerClient * clientCount;
        CaseResult result = new CaseResult(caseId, "S2 contended, " + clientCount
                + (clientCount == 1 ? " client × " : " clients × ") + threadsPerClient + " threads");
        List<LockLibrary> clients = new ArrayList<>();
        try {
            for (int i = 0; i < clientCount; i++) {
                clients.add(context.connect());
            }
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                locks[i] = clients.get(i % clientCount).lock("bench:s2:contended");
            }
            return measureExclusive(result, threads, locks, context);
        } finally {
            clients.forEach(LockLibrary::close);
        }
    }

    /** Runs contending threads on {@code locks} (one per thread, all the same name); shared with S4. */
    static CaseResult measureExclusive(CaseResult result, int threads, Lock[] locks, WorkerContext context) {
        CriticalSection section = new CriticalSection();
        Load.Outcome outcome = Load.run(threads, worker -> {
            Lock lock = locks[worker.index];
            long start = System.nanoTime();
            lock.lock();
            long waited = System.nanoTime() - start;
            try {
                section.enter();
            } finally {
                lock.unlock();
            }
            return waited;
        }, context.timing(), List.of(context.admin()));
        result.load(outcome, Metric.ACQUISITIONS_PER_S, Metric.WAIT_P50_US, Metric.WAIT_P99_US);
        if (outcome.ops() > 0) {
            double fair = (double) outcome.ops() / threads;
            long min = Long.MAX_VALUE;
            long max = 0;
            for (long ops : outcome.opsPerThread()) {
                min = Math.min(min, ops);
                max = Math.max(max, ops);
            }
            result.metric(Metric.SHARE_MIN, min / fair).metric(Metric.SHARE_MAX, max / fair);
        }
        return result.check("overlaps", section.overlaps.get())
                .check("lost_updates", section.entries.get() - section.counter)
                .detail("acquisitions_all_phases", section.entries.get());
    }

    /**
     * What runs under the lock: counts threads inside at once (must never exceed one), and
     * increments a plain field with a separate read and write, which loses updates as soon as
     * two threads overlap.
     */
    static final class CriticalSection {

        final AtomicInteger inside = new AtomicInteger();
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong entries = new AtomicLong();
        long counter; // deliberately not atomic: the lock is what protects it

        void enter() {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            long read = counter;
            Thread.onSpinWait();
            counter = read + 1;
            entries.incrementAndGet();
            inside.decrementAndGet();
        }
    }
}
