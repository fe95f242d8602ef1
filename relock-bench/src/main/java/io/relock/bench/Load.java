package io.relock.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * Runs a cycle on N threads through fixed phases, the same way for every library:
 * <ol>
 *   <li>{@code WARMUP} for the warm-up time: nothing recorded;</li>
 *   <li>{@code QUIESCE}: every thread finishes its cycle and waits; the servers' command
 *       statistics and the JVM's CPU time are read;</li>
 *   <li>{@code MEASURE} for the window: the cycles started in it are counted and their
 *       latencies recorded;</li>
 *   <li>{@code QUIESCE} again, and the statistics are read again: the difference belongs to
 *       exactly the cycles of the window;</li>
 *   <li>{@code COUNT} (optional): with MONITOR on, every thread runs whole cycles for a short
 *       time, so that round trips per cycle are counted exactly;</li>
 *   <li>{@code STOP}: threads finish their cycle and end.</li>
 * </ol>
 * The window's duration runs from its start until the last of its cycles has finished. Every
 * wait is bounded: threads that do not come back (a hang in the library) end the run with an
 * error carrying a dump of every thread's stack.
 */
final class Load {

    /** How long threads may take to finish their cycle when asked to pause or stop. */
    static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);

    enum Phase { WARMUP, MEASURE, QUIESCE, COUNT, STOP }

    /** One operation of a bench thread. */
    @FunctionalInterface
    interface Cycle {
        /**
         * Runs one operation.
         *
         * @return the latency to record, in nanoseconds, or -1 to record none for this operation
         */
        long run(Worker worker) throws Exception;
    }

    /**
     * How long each phase lasts.
     *
     * @param count the counting phase with MONITOR, or zero for none
     */
    record Timing(Duration warmup, Duration window, Duration count) {}

    /**
     * What one run measured.
     *
     * @param latencyPerThread each thread's latencies of the window, by thread index ({@code latency} is their sum)
     */
    record Outcome(
            long ops,
            double seconds,
            long[] opsPerThread,
            Histogram latency,
            Histogram[] latencyPerThread,
            long cpuNanos,
            long javaThreadsCpuNanos,
            RedisAdmin.ServerStats server,
            Monitor.Counts counts,
            long countOps,
            String error) {

        double opsPerSecond() {
            return seconds > 0 ? ops / seconds : Double.NaN;
        }

        double perOp(double total) {
            return ops == 0 ? Double.NaN : total / ops;
        }
    }

    /** The per-thread state a cycle may use. */
    static final class Worker {

        final int index;
        private final Load load;
        private final long[] ops = new long[Phase.values().length];
        private final Histogram latency = new Histogram(3);

        private Worker(Load load, int index) {
            this.load = load;
            this.index = index;
        }

        /** The current phase; cycles that wait inside (hand-off) stop waiting when it changes. */
        Phase phase() {
            return load.phase;
        }
    }

    private final Object gate = new Object();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Worker> workers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile Phase phase = Phase.WARMUP;
    private int waiting; // guarded by gate: threads paused in QUIESCE, or finished

    private Load() {
    }

    /**
     * Runs {@code cycle} on {@code threadCount} threads.
     *
     * @param servers the servers whose statistics are read (MONITOR runs on the first)
     */
    static Outcome run(int threadCount, Cycle cycle, Timing timing, List<RedisAdmin> servers) {
        return run(threadCount, cycle, timing, servers, () -> 0);
    }

    /**
     * Runs {@code cycle} on {@code threadCount} threads, some of whose work happens in other
     * processes (S3's waiter in another JVM).
     *
     * @param otherCpuNanos the CPU time of those other processes so far; read with this JVM's,
     *     while every thread is paused, and added to it
     */
    static Outcome run(int threadCount, Cycle cycle, Timing timing, List<RedisAdmin> servers, LongSupplier otherCpuNanos) {
        return new Load().execute(threadCount, cycle, timing, servers, otherCpuNanos);
    }

    private Outcome execute(int threadCount, Cycle cycle, Timing timing, List<RedisAdmin> servers,
            LongSupplier otherCpuNanos) {
        for (int i = 0; i < threadCount; i++) {
            Worker worker = new Worker(this, i);
            Thread thread = new Thread(() -> loop(worker, cycle), "bench-" + i);
            thread.setDaemon(true);
            workers.add(worker);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        sleep(timing.warmup());

        // Every thread pauses between cycles at both ends of the window, and the statistics are
        // read while they are paused: the window's commands, CPU and cycles then belong to
        // exactly the cycles that started in it.
        String error = null;
        RedisAdmin.ServerStats during = null;
        long start = 0;
        long end = 0;
        long cpuBefore = 0;
        long cpuAfter = 0;
        long threadsCpuBefore = 0;
        long threadsCpuAfter = 0;
        Monitor.Counts counts = null;
        setPhase(Phase.QUIESCE);
        if (!awaitWaiting()) {
            error = hang("finish their warm-up cycle when asked to pause");
        } else if (failure.get() == null) {
            servers.forEach(RedisAdmin::resetStats);
            RedisAdmin.ServerStats before = stats(servers);
            cpuBefore = processCpuNanos() + otherCpuNanos.getAsLong();
            threadsCpuBefore = javaThreadsCpuNanos();
            start = System.nanoTime();
            setPhase(Phase.MEASURE);
            sleep(timing.window());
            setPhase(Phase.QUIESCE);
            if (!awaitWaiting()) {
                error = hang("finish their cycle at the end of the window");
            }
            end = System.nanoTime();
            cpuAfter = processCpuNanos() + otherCpuNanos.getAsLong();
            threadsCpuAfter = javaThreadsCpuNanos();
            during = stats(servers).minus(before);
        }
        if (error == null && failure.get() == null && !timing.count().isZero()) {
            Monitor monitor = Monitor.start(servers.get(0));
            try {
                setPhase(Phase.COUNT);
                sleep(timing.count());
                setPhase(Phase.STOP);
                if (!join()) {
                    error = hang("finish their cycle when asked to stop (counting phase)");
                }
            } finally {
                // Read even after a hang: the counts are then incomplete, and reported with the error.
                counts = monitor.stop();
            }
        }
        setPhase(Phase.STOP);
        if (error == null && !join()) {
            error = hang("finish their cycle when asked to stop");
        }
        if (failure.get() != null) {
            error = Diagnostics.stackTrace(failure.get());
        }
        if (during == null) {
            during = new RedisAdmin.ServerStats(Map.of(), 0);
        }

        Histogram latency = new Histogram(3);
        long[] perThread = new long[threadCount];
        Histogram[] latencyPerThread = new Histogram[threadCount];
        long ops = 0;
        long countOps = 0;
        for (Worker worker : workers) {
            latency.add(worker.latency);
            perThread[worker.index] = worker.ops[Phase.MEASURE.ordinal()];
            latencyPerThread[worker.index] = worker.latency;
            ops += perThread[worker.index];
            countOps += worker.ops[Phase.COUNT.ordinal()];
        }
        return new Outcome(ops, (end - start) / 1e9, perThread, latency, latencyPerThread, cpuAfter - cpuBefore,
                threadsCpuAfter - threadsCpuBefore, during, counts,
                countOps, error);
    }

    private void loop(Worker worker, Cycle cycle) {
        try {
            while (true) {
                Phase started = phase;
                if (started == Phase.STOP) {
                    return;
                }
                if (started == Phase.QUIESCE) {
                    pause();
                    continue;
                }
                long latency = cycle.run(worker);
                // A cycle belongs to the phase it started in: phases end with every thread
                // paused, so each cycle lies whole inside its phase.
                worker.ops[started.ordinal()]++;
                if (started == Phase.MEASURE && latency >= 0) {
                    worker.latency.recordValue(latency);
                }
            }
        } catch (Throwable e) {
            if (failure.compareAndSet(null, e)) {
                setPhase(Phase.STOP);
            }
        } finally {
            synchronized (gate) {
                waiting++;
                gate.notifyAll();
            }
        }
    }

    private void pause() throws InterruptedException {
        synchronized (gate) {
            waiting++;
            gate.notifyAll();
            try {
                while (phase == Phase.QUIESCE) {
                    gate.wait(100);
                }
            } finally {
                waiting--;
            }
        }
    }

    private void setPhase(Phase next) {
        synchronized (gate) {
            if (phase != Phase.STOP) {
                phase = next;
            }
            gate.notifyAll();
        }
    }

    /** Waits until every thread is paused or finished. */
    private boolean awaitWaiting() {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        synchronized (gate) {
            while (waiting < threads.size()) {
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

    private boolean join() {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        for (Thread thread : threads) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    private String hang(String what) {
        long stuck = threads.stream().filter(Thread::isAlive).count();
        return "HANG: " + stuck + " of " + threads.size() + " bench threads did not " + what + " within "
                + SETTLE_TIMEOUT.toSeconds() + " s\n" + Diagnostics.threadDump();
    }

    /** Sleeps, ending early if a cycle failed. */
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

    static RedisAdmin.ServerStats stats(List<RedisAdmin> servers) {
        RedisAdmin.ServerStats sum = new RedisAdmin.ServerStats(Map.of(), 0);
        for (RedisAdmin server : servers) {
            sum = sum.plus(server.stats());
        }
        return sum;
    }

    /**
     * CPU time of the live Java threads (the library's and the bench's), without the JIT
     * compiler and GC threads that the process CPU time includes: with short windows the JIT
     * can be a large part of it.
     */
    static long javaThreadsCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            long cpu = threads.getThreadCpuTime(id);
            if (cpu > 0) {
                sum += cpu;
            }
        }
        return sum;
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
