package io.relock.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * S7, reactive: S2's contention with reactive pipelines instead of threads. S subscriptions are
 * in flight at all times over C client instances, all on ONE lock name: S pipelines (pipeline i
 * on client i mod C), each subscribing to one lock-holding operation after another (see
 * {@link ReactiveLoad}). An operation acquires (subscribed to, it waits without a thread), runs
 * S2's critical section with its overlap detector and non-atomic counter (both must stay at 0),
 * and releases. Nothing in the pipelines blocks, and the bench adds no thread. Every
 * subscription is an owner of its own: Relock's {@code ReactiveLock} makes a new owner id per
 * subscription, Redisson's {@code RLockReactive} gets a new number per subscription as its
 * {@code threadId}.
 *
 * <p>Measures acquisitions/s, the wait from subscription to acquired (p50, p99, the window's
 * longest), and the threads the library used: the most live JVM threads at any time in the
 * window minus those live before the clients were created (the JVM's, the worker's). With no
 * thread per waiter, that is the clients' own threads. Also how evenly the pipelines got the
 * lock: the fewest and the most acquisitions of one pipeline in the window, over an equal share
 * (all acquisitions over all pipelines).
 *
 * <p>{@code s1000x4} is 1 000 subscriptions over 4 clients. Spring Integration's
 * {@code RedisLockRegistry} has no reactive lock, so it has nothing to measure here.
 */
final class S7Reactive implements Scenario {

    static final String CASE = "S7/s1000x4";
    static final String LOCK_NAME = "bench:s7:reactive";
    static final String NO_REACTIVE_LOCK = "no reactive lock: its locks are java.util.concurrent.locks.Lock, "
            + "held by the thread that called lock()";

    /** A case's shape: subscriptions in flight, and the clients they are spread over. */
    record Shape(int subscriptions, int clients) {

        static Shape of(String caseId) {
            String[] parts = caseId.substring("S7/s".length()).split("x");
            return new Shape(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        }

        /** {@code 1 000 subscriptions over 4 clients}. */
        String text() {
            return String.format(Locale.ROOT, "%,d", subscriptions).replace(',', ' ') + " subscriptions over " + clients
                    + (clients == 1 ? " client" : " clients");
        }
    }

    @Override
    public String id() {
        return "S7";
    }

    @Override
    public String title() {
        return "reactive: S subscriptions over C clients on one lock name";
    }

    /**
     * None with {@code --quick}: no goal reads the case, and each of its pauses drains 1 000
     * waiters (seconds at Redisson's rate), too long for a smoke run.
     */
    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of() : List.of(CASE);
    }

    @Override
    public String without(String caseId, Library library) {
        return library == Library.REGISTRY ? NO_REACTIVE_LOCK : null;
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        Shape shape = Shape.of(caseId);
        CaseResult result = new CaseResult(caseId, "S7 reactive, " + shape.text());
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<LockLibrary> clients = new ArrayList<>();
        try {
            PipelineLock[] locks = new PipelineLock[shape.clients()];
            for (int i = 0; i < shape.clients(); i++) {
                LockLibrary client = context.connect();
                clients.add(client);
                Optional<PipelineLock> lock = client.pipelineLock(LOCK_NAME);
                if (lock.isEmpty()) {
                    return result.unavailable(NO_REACTIVE_LOCK);
                }
                locks[i] = lock.get();
            }
            S2Contended.CriticalSection section = new S2Contended.CriticalSection();
            ReactiveLoad.Outcome outcome = ReactiveLoad.run(shape.subscriptions(), index -> {
                long subscribed = System.nanoTime();
                return locks[index % locks.length].withLock(Mono.fromCallable(() -> {
                    long waited = System.nanoTime() - subscribed;
                    section.enter();
                    return waited;
                }));
            }, context.timing(), List.of(context.admin()));
            Load.Outcome load = outcome.load();
            result.load(load, Metric.ACQUISITIONS_PER_S, Metric.WAIT_P50_US, Metric.WAIT_P99_US);
            if (load.latency().getTotalCount() > 0) {
                result.metric(Metric.WAIT_MAX_MS, load.latency().getMaxValue() / 1e6);
            }
            if (outcome.peakThreads() > 0) {
                result.metric(Metric.THREADS_USED, outcome.peakThreads() - threadsBefore)
                        .detail("threads_before_clients", threadsBefore)
                        .detail("threads_peak_in_window", outcome.peakThreads())
                        .detail("threads_at_window_end", outcome.threadsAtEnd());
            }
            if (load.ops() > 0) {
                double equal = (double) load.ops() / shape.subscriptions();
                long min = Long.MAX_VALUE;
                long max = 0;
                long none = 0;
                for (long ops : load.opsPerThread()) {
                    min = Math.min(min, ops);
                    max = Math.max(max, ops);
                    none += ops == 0 ? 1 : 0;
                }
                result.metric(Metric.PIPELINE_SHARE_MIN, min / equal)
                        .metric(Metric.PIPELINE_SHARE_MAX, max / equal)
                        .detail("pipelines_without_acquisition", none);
            }
            return result.check("overlaps", section.overlaps.get())
                    .check("lost_updates", section.entries.get() - section.counter)
                    .detail("acquisitions_all_phases", section.entries.get())
                    .detail("subscriptions", shape.subscriptions())
                    .detail("client_instances", shape.clients());
        } finally {
            clients.forEach(LockLibrary::close);
        }
    }
}
