package io.relock.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link Load}'s phases for reactive pipelines instead of threads: N pipelines are in flight at
 * once, each subscribing to one operation (a {@code Mono}) after another, none on a thread of
 * its own and none waiting on a thread. The phases are Load's:
 * <ol>
 *   <li>{@code WARMUP} for the warm-up time: nothing recorded;</li>
 *   <li>{@code QUIESCE}: every pipeline finishes its operation and does not subscribe again;
 *       when all have, the servers' command statistics, the JVM's CPU time are read and its
 *       peak thread count is reset;</li>
 *   <li>{@code MEASURE} for the window: every pipeline is subscribed again; the operations
 *       subscribed to in it are counted and their latencies recorded;</li>
 *   <li>{@code QUIESCE} again, and the statistics and the peak thread count are read: the
 *       difference belongs to exactly the window's operations;</li>
 *   <li>{@code COUNT} (optional): with MONITOR on, the pipelines run whole operations for a
 *       short time, so that round trips per operation are counted exactly;</li>
 *   <li>{@code STOP}: pipelines finish their operation and end.</li>
 * </ol>
 * The window runs from its start until the last of its operations has finished: with N
 * pipelines on one lock, the last of them wait behind up to N − 1 others, and the window
 * includes that drain (the lock stays busy through it). Every wait is bounded: pipelines that
 * do not finish (a hang in the library) end the run with an error and a dump of every thread's
 * stack, and are then cancelled.
 *
 * <p>The outcome is a {@link Load.Outcome} whose "threads" are the pipelines (its per-thread
 * operations are per pipeline; it has no per-pipeline latencies), beside the JVM's thread
 * counts of the window.
 */
final class ReactiveLoad {

    /** One operation of a pipeline. */
    @FunctionalInterface
    interface Operation {
        /**
         * The operation of pipeline {@code index}, called when the pipeline subscribes to it
         * (once per operation). It must not block.
         *
         * @return emits the latency to record, in nanoseconds (empty or -1: record none), and
         *     completes when the operation is over
         */
        Mono<Long> of(int index);
    }

    /**
     * What one run measured.
     *
     * @param load the operations, latencies, Redis statistics and CPU, as {@link Load} measures them
     * @param peakThreads the most live JVM threads at any time in the window ({@link ThreadMXBean#getPeakThreadCount})
     * @param threadsAtEnd the live JVM threads at the end of the window
     */
    record Outcome(Load.Outcome load, int peakThreads, int threadsAtEnd) {}

    private final Object gate = new Object();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Histogram latency = new ConcurrentHistogram(3);
    private final AtomicLongArray[] ops = new AtomicLongArray[Load.Phase.values().length];
    private final List<Disposable> subscriptions = new ArrayList<>();
    private final int pipelines;
    private final Operation operation;
    private volatile Load.Phase phase = Load.Phase.WARMUP;
    private int finished; // guarded by gate: pipelines that stopped subscribing since they were last started

    private ReactiveLoad(int pipelines, Operation operation) {
        this.pipelines = pipelines;
        this.operation = operation;
        for (int i = 0; i < ops.length; i++) {
            ops[i] = new AtomicLongArray(pipelines);
        }
    }

    /**
     * Runs {@code pipelines} pipelines of {@code operation}.
     *
     * @param servers the servers whose statistics are read (MONITOR runs on the first)
     */
    static Outcome run(int pipelines, Operation operation, Load.Timing timing, List<RedisAdmin> servers) {
        return new ReactiveLoad(pipelines, operation).execute(timing, servers);
    }

    private Outcome execute(Load.Timing timing, List<RedisAdmin> servers) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        String error = null;
        RedisAdmin.ServerStats during = null;
        long start = 0;
        long end = 0;
        long cpuBefore = 0;
        long cpuAfter = 0;
        long threadsCpuBefore = 0;
        long threadsCpuAfter = 0;
        int peakThreads = 0;
        int threadsAtEnd = 0;
        Monitor.Counts counts = null;
        try {
            startAll(Load.Phase.WARMUP);
            sleep(timing.warmup());
            if (!quiesce()) {
                error = hang("finish their warm-up operation when asked to pause");
            } else if (failure.get() == null) {
                servers.forEach(RedisAdmin::resetStats);
                RedisAdmin.ServerStats before = Load.stats(servers);
                cpuBefore = Load.processCpuNanos();
                threadsCpuBefore = Load.javaThreadsCpuNanos();
                threads.resetPeakThreadCount();
                start = System.nanoTime();
                startAll(Load.Phase.MEASURE);
                sleep(timing.window());
                if (!quiesce()) {
                    error = hang("finish their operation at the end of the window");
                }
                end = System.nanoTime();
                peakThreads = threads.getPeakThreadCount();
                threadsAtEnd = threads.getThreadCount();
                cpuAfter = Load.processCpuNanos();
                threadsCpuAfter = Load.javaThreadsCpuNanos();
                during = Load.stats(servers).minus(before);
            }
            if (error == null && failure.get() == null && !timing.count().isZero()) {
                Monitor monitor = Monitor.start(servers.get(0));
                try {
                    startAll(Load.Phase.COUNT);
                    sleep(timing.count());
                    if (!quiesce()) {
                        error = hang("finish their operation when asked to stop (counting phase)");
                    }
                } finally {
                    // Read even after a hang: the counts are then incomplete, and reported with the error.
                    counts = monitor.stop();
                }
            }
        } finally {
            synchronized (gate) {
                phase = Load.Phase.STOP;
            }
            // After a hang, what is still in flight is cancelled (the libraries give the locks back).
            subscriptions.forEach(Disposable::dispose);
        }
        if (failure.get() != null) {
            error = Diagnostics.stackTrace(failure.get());
        }
        if (during == null) {
            during = new RedisAdmin.ServerStats(Map.of(), 0);
        }
        long[] perPipeline = new long[pipelines];
        long measured = 0;
        long counted = 0;
        for (int i = 0; i < pipelines; i++) {
            perPipeline[i] = ops[Load.Phase.MEASURE.ordinal()].get(i);
            measured += perPipeline[i];
            counted += ops[Load.Phase.COUNT.ordinal()].get(i);
        }
        Load.Outcome load = new Load.Outcome(measured, (end - start) / 1e9, perPipeline, latency, new Histogram[0],
                cpuAfter - cpuBefore, threadsCpuAfter - threadsCpuBefore, during, counts, counted, error);
        return new Outcome(load, peakThreads, threadsAtEnd);
    }

    /** Subscribes every pipeline in {@code next}; each goes on until the phase changes. */
    private void startAll(Load.Phase next) {
        synchronized (gate) {
            finished = 0;
            setPhase(next);
        }
        subscriptions.clear();
        for (int i = 0; i < pipelines; i++) {
            subscriptions.add(pipeline(i).subscribe(null, this::fail, this::finish));
        }
    }

    /**
     * Pipeline {@code index}: one operation after another for as long as the phase it started
     * in lasts. An operation belongs to the phase it was subscribed to in; phases end with every
     * pipeline finished, so each operation lies whole inside its phase.
     */
    private Flux<Long> pipeline(int index) {
        return Mono.defer(() -> {
            Load.Phase started = phase;
            if (!runs(started)) {
                return Mono.<Long>empty();
            }
            return operation.of(index)
                    .doOnNext(nanos -> {
                        if (started == Load.Phase.MEASURE && nanos >= 0) {
                            latency.recordValue(nanos);
                        }
                    })
                    .doOnSuccess(ignored -> ops[started.ordinal()].incrementAndGet(index));
        }).repeat(() -> runs(phase));
    }

    private static boolean runs(Load.Phase phase) {
        return phase == Load.Phase.WARMUP || phase == Load.Phase.MEASURE || phase == Load.Phase.COUNT;
    }

    private void finish() {
        synchronized (gate) {
            finished++;
            gate.notifyAll();
        }
    }

    private void fail(Throwable error) {
        failure.compareAndSet(null, error);
        synchronized (gate) {
            phase = Load.Phase.STOP;
        }
        finish();
    }

    /** The next phase, unless a failure has stopped the run. */
    private void setPhase(Load.Phase next) {
        synchronized (gate) {
            if (phase != Load.Phase.STOP) {
                phase = next;
            }
        }
    }

    /** Asks every pipeline to stop after its operation, and waits (bounded) until all have. */
    private boolean quiesce() {
        long deadline = System.nanoTime() + Load.SETTLE_TIMEOUT.toNanos();
        synchronized (gate) {
            setPhase(Load.Phase.QUIESCE);
            while (finished < pipelines) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    gate.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    private String hang(String what) {
        int stuck;
        synchronized (gate) {
            stuck = pipelines - finished;
        }
        return "HANG: " + stuck + " of " + pipelines + " pipelines did not " + what + " within "
                + Load.SETTLE_TIMEOUT.toSeconds() + " s\n" + Diagnostics.threadDump();
    }

    /** Sleeps, ending early if an operation failed. */
    private void sleep(Duration duration) {
        long deadline = System.nanoTime() + duration.toNanos();
        while (failure.get() == null) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                Thread.sleep(Math.min(50, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
