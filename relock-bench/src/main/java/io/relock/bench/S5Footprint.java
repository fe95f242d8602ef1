package io.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.stream.Collectors;

/**
 * S5, footprint: what one client costs the application and Redis while it exists.
 * <ul>
 *   <li>{@code footprint}: threads and Redis connections one client adds, right after it is
 *       created and after it has been used (uncontended and contended locking, so that lazy
 *       pools and the pub/sub connection are in place);</li>
 *   <li>{@code watchdog}: {@value #HELD_LOCKS} locks held with watchdog-renewed leases; MONITOR
 *       counts the client's renewal calls per tick, then a window without MONITOR measures the
 *       Redis commands (including inside scripts) and Redis CPU per tick. Both libraries run
 *       with a {@link #WATCHDOG_TIMEOUT} watchdog timeout, so that a tick comes every second;
 *       the work per tick does not depend on the interval.</li>
 * </ul>
 */
final class S5Footprint implements Scenario {

    static final int HELD_LOCKS = 10_000;
    static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(3);
    static final String HELD_PREFIX = "bench:s5:held:";

    private static final int HOLDER_THREADS = 16;
    private static final Duration MONITORED = Duration.ofMillis(3500);
    private static final Duration UNMONITORED = Duration.ofSeconds(2);
    private static final Duration SETTLE = Duration.ofMillis(500);
    private static final long BOUND_SECONDS = 120;
    /** Threads of the JVM itself, which may start at any time; not the library's. */
    private static final List<String> JVM_THREADS = List.of("C1 CompilerThread", "C2 CompilerThread",
            "Attach Listener", "Common-Cleaner", "process reaper", "bench-", "Notification Thread");

    @Override
    public String id() {
        return "S5";
    }

    @Override
    public String title() {
        return "footprint: threads and connections per client; watchdog cost with " + HELD_LOCKS + " held locks";
    }

    @Override
    public List<String> cases(boolean quick) {
        return List.of("S5/footprint", "S5/watchdog");
    }

    /** The registry keeps a fixed lease (60 s) on a held lock: nothing renews it. */
    @Override
    public String without(String caseId, Library library) {
        return caseId.equals("S5/watchdog") && library == Library.REGISTRY ? "no watchdog: a held lock keeps a fixed lease"
                : null;
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) throws Exception {
        return caseId.equals("S5/footprint") ? footprint(caseId, context) : watchdog(caseId, context);
    }

    private static CaseResult footprint(String caseId, WorkerContext context) throws Exception {
        CaseResult result = new CaseResult(caseId, "S5 footprint of one client");
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        long connectionsBefore = connections(context.admin());
        try (LockLibrary client = context.connect()) {
            Thread.sleep(SETTLE.toMillis());
            result.metric(Metric.THREADS_IDLE, libraryThreads(before).size());
            result.metric(Metric.CONNECTIONS_IDLE, connections(context.admin()) - connectionsBefore);

            String failure = exercise(client);
            Thread.sleep(SETTLE.toMillis());
            List<String> threads = libraryThreads(before);
            result.metric(Metric.THREADS, threads.size());
            result.metric(Metric.CONNECTIONS, connections(context.admin()) - connectionsBefore);
            result.detail("threads_by_name", threads.stream()
                    .collect(Collectors.groupingBy(name -> name.replaceAll("\\d+", "#"), TreeMap::new,
                            Collectors.counting())));
            return result.error(failure);
        }
    }

    /** 8 threads × 200 uncontended cycles, then 4 threads × 50 cycles on one name. */
    private static String exercise(LockLibrary client) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Lock lock = client.lock("bench:s5:own:" + i);
            threads.add(runner("bench-fp-" + i, failure, () -> {
                for (int n = 0; n < 200; n++) {
                    lock.lock();
                    lock.unlock();
                }
            }));
        }
        String uncontended = joinAll(threads, failure, "uncontended exercise");
        if (uncontended != null) {
            return uncontended;
        }
        threads.clear();
        for (int i = 0; i < 4; i++) {
            Lock lock = client.lock("bench:s5:shared");
            threads.add(runner("bench-fp-shared-" + i, failure, () -> {
                for (int n = 0; n < 50; n++) {
                    lock.lock();
                    lock.unlock();
                }
            }));
        }
        return joinAll(threads, failure, "contended exercise");
    }

    private static CaseResult watchdog(String caseId, WorkerContext context) throws Exception {
        CaseResult result = new CaseResult(caseId, "S5 watchdog, " + HELD_LOCKS + " held locks");
        result.detail("watchdog_timeout_ms", WATCHDOG_TIMEOUT.toMillis());
        long intervalMillis = WATCHDOG_TIMEOUT.toMillis() / 3;
        try (LockLibrary client = context.library().connect(context.uri(), WATCHDOG_TIMEOUT)) {
            if (!client.renewsLeases()) {
                return result.unavailable("no watchdog: a held lock keeps a fixed lease");
            }
            CountDownLatch acquired = new CountDownLatch(HOLDER_THREADS);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> holders = new ArrayList<>();
            for (int t = 0; t < HOLDER_THREADS; t++) {
                int first = t;
                holders.add(runner("bench-holder-" + t, failure, () -> {
                    List<Lock> held = new ArrayList<>();
                    try {
                        for (int i = first; i < HELD_LOCKS; i += HOLDER_THREADS) {
                            Lock lock = client.lock(HELD_PREFIX + i);
                            lock.lock();
                            held.add(lock);
                        }
                    } finally {
                        acquired.countDown();
                    }
                    if (!release.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("never told to release");
                    }
                    Collections.reverse(held);
                    for (Lock lock : held) {
                        lock.unlock();
                    }
                }));
            }
            try {
                if (!acquired.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                    return result.error("HANG: " + HELD_LOCKS + " locks not acquired within " + BOUND_SECONDS + " s\n"
                            + Diagnostics.threadDump());
                }
                if (failure.get() != null) {
                    return result.error(Diagnostics.stackTrace(failure.get()));
                }
                // Let one tick pass after the acquisitions, then count whole ticks.
                Thread.sleep(intervalMillis + 200);

                Monitor monitor = Monitor.start(context.admin());
                Thread.sleep(MONITORED.toMillis());
                Monitor.Counts counts = monitor.stop();
                List<Integer> bursts = counts.bursts(intervalMillis / 3000.0);
                double callsPerTick = median(bursts.size() > 2 ? bursts.subList(1, bursts.size() - 1) : bursts);
                result.detail("calls_per_burst", bursts);
                result.detail("client_commands", counts.clientCommands());
                result.detail("script_commands", counts.scriptCommands());

                RedisAdmin.ServerStats start = context.admin().stats();
                Thread.sleep(UNMONITORED.toMillis());
                RedisAdmin.ServerStats window = context.admin().stats().minus(start);
                double ticks = callsPerTick > 0 ? window.scriptCalls() / callsPerTick : Double.NaN;
                result.detail("ticks_in_window", ticks);
                result.metric(Metric.WATCHDOG_CALLS_PER_TICK, callsPerTick);
                result.metric(Metric.WATCHDOG_COMMANDS_PER_TICK, window.totalCalls() / ticks);
                result.metric(Metric.WATCHDOG_REDIS_CPU_MS_PER_TICK, window.cpuSeconds() * 1e3 / ticks);

                // The held locks' keys only: a client may keep keys of its own (Relock's client entry).
                result.check("locks_lost", HELD_LOCKS - context.admin().countKeys(HELD_PREFIX + "*"));
            } finally {
                release.countDown();
                String stuck = joinAll(holders, failure, "release of the held locks");
                result.error(stuck);
            }
            return result;
        }
    }

    private static double median(List<Integer> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Integer> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2.0;
    }

    private static long connections(RedisAdmin admin) {
        return Long.parseLong(admin.infoField("clients", "connected_clients"));
    }

    /** Names of live threads that were not there before, without the JVM's own. */
    private static List<String> libraryThreads(Set<Thread> before) {
        List<String> names = new ArrayList<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            String name = thread.getName();
            if (!before.contains(thread) && JVM_THREADS.stream().noneMatch(name::startsWith)) {
                names.add(name);
            }
        }
        Collections.sort(names);
        return names;
    }

    /** Work that may throw, for {@link #runner}. */
    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    private static Thread runner(String name, AtomicReference<Throwable> failure, Body body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Joins with a bound; returns an error text (stack trace or thread dump), or null. */
    private static String joinAll(List<Thread> threads, AtomicReference<Throwable> failure, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                return "HANG: " + what + " did not finish within " + BOUND_SECONDS + " s\n" + Diagnostics.threadDump();
            }
        }
        Throwable error = failure.get();
        return error == null ? null : what + " failed: " + Diagnostics.stackTrace(error);
    }
}
