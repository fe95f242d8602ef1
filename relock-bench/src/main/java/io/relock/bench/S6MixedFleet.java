package io.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import org.HdrHistogram.Histogram;

/**
 * S6, a mixed fleet: Relock and Redisson clients contend on ONE lock name at the same time, as
 * during a migration from Redisson (docs/migrating-from-redisson.md, and
 * {@code MixedFleetTest}, the correctness test with the same shapes). Measures, per library,
 * acquisitions/s, acquisitions per thread and their share of an equal share, and the wait in
 * {@code lock()} (p50, p99, max); the critical section has S2's overlap detector and
 * non-atomic counter, which must stay at 0.
 *
 * <p>Both libraries' clients live in one worker JVM (Relock's), each client its own instance
 * with its own connections and threads, so Redis sees what separate processes would send. One
 * JVM because the overlap detector and the phases (warm-up, pause, window) are in-process:
 * across JVMs both would need a protocol of their own. The case runs once per repeat, in
 * Relock's worker, and reports Redisson's figures as Redisson's ({@link CaseResult#beside}).
 *
 * <p>Case ids read like S2's: {@code r4x2-s2x1} is Relock 4 threads × 2 clients with Redisson
 * 2 threads × 1 client; {@code rw…} takes the write lock of the read-write lock.
 */
final class S6MixedFleet implements Scenario {

    /** The libraries of the fleet: the worker's (Relock) and the one beside it. */
    static final List<Library> FLEET = List.of(Library.RELOCK, Library.REDISSON);

    static final String LOCK_NAME = "bench:s6:mixed";

    /** A case's shape: threads per client and clients, per library. */
    record Shape(boolean writeLock, int relockThreads, int relockClients, int redissonThreads, int redissonClients) {

        static Shape of(String caseId) {
            String text = caseId.substring("S6/".length());
            boolean writeLock = text.startsWith("rw");
            String[] parts = text.substring(writeLock ? 2 : 1).split("-s");
            String[] relock = parts[0].split("x");
            String[] redisson = parts[1].split("x");
            return new Shape(writeLock, Integer.parseInt(relock[0]), Integer.parseInt(relock[1]),
                    Integer.parseInt(redisson[0]), Integer.parseInt(redisson[1]));
        }

        /** {@code Relock 2×4 + Redisson 1×2}: clients × threads, as the issue writes it. */
        String text() {
            return "Relock " + relockClients + "×" + relockThreads + " + Redisson " + redissonClients + "×"
                    + redissonThreads;
        }

        int relockThreadCount() {
            return relockThreads * relockClients;
        }

        int threadCount() {
            return relockThreadCount() + redissonThreads * redissonClients;
        }
    }

    static boolean isMixed(String caseId) {
        return caseId.startsWith("S6/");
    }

    @Override
    public String id() {
        return "S6";
    }

    @Override
    public String title() {
        return "mixed fleet: Relock and Redisson clients on one lock name";
    }

    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of("S6/r4x2-s2x1") : List.of("S6/r4x2-s2x1", "S6/r2x1-s4x2", "S6/rw4x2-s2x1");
    }

    /**
     * Half the warm-up, the whole window and no counting phase (round trips per acquisition mean
     * little for two libraries at once): three cases, once per repeat, add under a minute to
     * the full run.
     */
    @Override
    public Load.Timing timing(String caseId, Load.Timing given) {
        return new Load.Timing(given.warmup().dividedBy(2), given.window(), Duration.ZERO);
    }

    @Override
    public String without(String caseId, Library library) {
        return switch (library) {
            case RELOCK -> null;
            case REDISSON -> "runs in Relock's worker, beside it";
            case REGISTRY -> "not part of the mixed fleet (Relock and Redisson on one name)";
        };
    }

    @Override
    public List<Library> beside(String caseId) {
        return List.of(Library.REDISSON);
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        Shape shape = Shape.of(caseId);
        String title = "mixed fleet, " + (shape.writeLock() ? "write locks, " : "") + shape.text();
        CaseResult relock = new CaseResult(caseId, title);
        CaseResult redisson = new CaseResult(caseId, title);
        relock.beside(Library.REDISSON, redisson);
        if (context.library() != Library.RELOCK) {
            return relock.error("S6 runs in Relock's worker, not " + context.library().displayName() + "'s");
        }
        List<LockLibrary> clients = new ArrayList<>();
        try {
            // Relock's threads first (indexes 0 to its thread count), then Redisson's.
            List<Lock> locks = new ArrayList<>();
            String missing = connect(locks, clients, Library.RELOCK, shape.relockClients(), shape.relockThreads(),
                    shape, context);
            if (missing == null) {
                missing = connect(locks, clients, Library.REDISSON, shape.redissonClients(), shape.redissonThreads(),
                        shape, context);
            }
            if (missing != null) {
                redisson.unavailable(missing);
                return relock.unavailable(missing);
            }
            S2Contended.CriticalSection section = new S2Contended.CriticalSection();
            // Every wait counts for the longest, not only the window's: a thread stuck through
            // the warm-up or the pauses is as stuck (each thread writes only its own slot).
            long[] longestWait = new long[shape.threadCount()];
            Load.Outcome outcome = Load.run(shape.threadCount(), worker -> {
                Lock lock = locks.get(worker.index);
                long start = System.nanoTime();
                lock.lock();
                long waited = System.nanoTime() - start;
                longestWait[worker.index] = Math.max(longestWait[worker.index], waited);
                try {
                    section.enter();
                } finally {
                    lock.unlock();
                }
                return waited;
            }, timing(caseId, context.timing()), List.of(context.admin()));

            int relockThreads = shape.relockThreadCount();
            double equal = outcome.ops() / (double) shape.threadCount();
            measure(relock, outcome, longestWait, 0, relockThreads, equal);
            measure(redisson, outcome, longestWait, relockThreads, shape.threadCount(), equal);
            // The fleet as a whole belongs to neither library: details of Relock's result.
            relock.detail("fleet_acquisitions_per_s", outcome.opsPerSecond())
                    .detail("fleet_commands_per_acquisition", outcome.perOp(outcome.server().totalCalls()))
                    .detail("fleet_redis_cpu_us_per_acquisition", outcome.perOp(outcome.server().cpuSeconds() * 1e6))
                    .detail("seconds", outcome.seconds());
            return relock.check("overlaps", section.overlaps.get())
                    .check("lost_updates", section.entries.get() - section.counter)
                    .detail("acquisitions_all_phases", section.entries.get())
                    .error(outcome.error());
        } finally {
            clients.forEach(LockLibrary::close);
        }
    }

    /**
     * Connects {@code clientCount} clients of {@code library} and adds a lock per thread;
     * returns why the library cannot take part (no read-write lock), or null.
     */
    private static String connect(List<Lock> locks, List<LockLibrary> clients, Library library, int clientCount,
            int threadsPerClient, Shape shape, WorkerContext context) {
        for (int c = 0; c < clientCount; c++) {
            LockLibrary client = library.connect(context.uri(), null);
            clients.add(client);
            for (int t = 0; t < threadsPerClient; t++) {
                Optional<Lock> lock = shape.writeLock() ? client.writeLock(LOCK_NAME) : Optional.of(client.lock(LOCK_NAME));
                if (lock.isEmpty()) {
                    return "no read-write lock in this " + library.displayName() + " version";
                }
                locks.add(lock.get());
            }
        }
        return null;
    }

    /**
     * One library's figures: its threads are indexes {@code from} (inclusive) to {@code to}. The
     * longest wait is over the whole case, warm-up and pauses included; the others are the window's.
     */
    private static void measure(CaseResult result, Load.Outcome outcome, long[] longestWait, int from, int to,
            double equal) {
        int threads = to - from;
        long ops = 0;
        long longest = 0;
        Histogram waits = new Histogram(3);
        List<Long> perThread = new ArrayList<>();
        for (int i = from; i < to; i++) {
            ops += outcome.opsPerThread()[i];
            perThread.add(outcome.opsPerThread()[i]);
            waits.add(outcome.latencyPerThread()[i]);
            longest = Math.max(longest, longestWait[i]);
        }
        double perThreadMean = ops / (double) threads;
        result.metric(Metric.ACQUISITIONS_PER_S, outcome.seconds() > 0 ? ops / outcome.seconds() : Double.NaN)
                .metric(Metric.ACQUISITIONS_PER_THREAD, perThreadMean)
                .metric(Metric.SHARE_OF_EQUAL, equal > 0 ? perThreadMean / equal : Double.NaN);
        if (waits.getTotalCount() > 0) {
            result.metric(Metric.WAIT_P50_US, waits.getValueAtPercentile(50) / 1e3)
                    .metric(Metric.WAIT_P99_US, waits.getValueAtPercentile(99) / 1e3);
        }
        result.metric(Metric.WAIT_MAX_MS, longest / 1e6).detail("window_wait_max_ms", waits.getMaxValue() / 1e6);
        result.detail("threads", threads).detail("ops", ops).detail("acquisitions_per_thread", perThread);
    }
}
