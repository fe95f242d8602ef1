package io.relock.bench;

import io.relock.LeaderElection;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.zookeeper.RelockZooKeeper;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.curator.test.TestingServer;

/**
 * Relock on ZooKeeper beside Curator's recipes ({@code InterProcessMutex}, {@code LeaderLatch})
 * on the same ZooKeeper server, in one run: uncontended cycles at 1, 8 and 64 threads with the
 * ZooKeeper requests per cycle (the server's own count, from {@code srvr}), 4 clients × 2 threads
 * on one lock, the cross-client hand-off, and the time from a leader's close to the next
 * leader's election.
 *
 * <p>{@code mvn -q -B -Pzk-bench -DskipTests verify [-Dzk.args="--seconds 3 --repeats 3"]} from
 * the repository root; writes {@code results/zk-latest.md}.
 */
public final class ZkBench {

    private static final Duration SESSION = Duration.ofSeconds(10);

    private final int seconds;
    private final int repeats;
    private final int rounds;
    private final PrintStream out = System.out;
    private final StringBuilder report = new StringBuilder();
    private TestingServer server;

    private ZkBench(int seconds, int repeats, int rounds) {
        this.seconds = seconds;
        this.repeats = repeats;
        this.rounds = rounds;
    }

    public static void main(String[] args) throws Exception {
        int seconds = 3;
        int repeats = 3;
        int rounds = 200;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--quick" -> {
                    seconds = 1;
                    repeats = 1;
                    rounds = 30;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (known: --seconds N, --repeats N, --rounds N, --quick)");
            }
        }
        new ZkBench(seconds, repeats, rounds).run();
        System.exit(0);
    }

    /** One library's clients: a lock by name, and the client's close. */
    private interface Library extends AutoCloseable {
        Lock lock(String name);

        @Override
        void close();
    }

    private void run() throws Exception {
        report.append("# ZooKeeper bench: Relock beside Curator's InterProcessMutex and LeaderLatch\n\n")
                .append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores; one ZooKeeper ").append(org.apache.zookeeper.Version.getFullVersion().split("-")[0])
                .append(" server (curator-test's TestingServer, in the bench's JVM); ").append(seconds)
                .append(" s per case after a warm-up of each library, median of ").append(repeats)
                .append(" runs taking the libraries in alternating order; sessions of ")
                .append(SESSION.toSeconds()).append(" s. Reproduce: `mvn -q -B -Pzk-bench -DskipTests verify ")
                .append("-Dzk.args=\"--seconds ").append(seconds).append(" --repeats ").append(repeats)
                .append("\"`.\n\n");
        try (TestingServer started = new TestingServer(true)) {
            server = started;
            Map<String, Supplier<Library>> libraries = new LinkedHashMap<>();
            libraries.put("Relock", this::relock);
            libraries.put("InterProcessMutex", this::curatorMutex);
            uncontended(libraries);
            contended(libraries);
            handOff(libraries);
            failover();
        }
        Path file = Path.of("results", "zk-latest.md");
        Files.createDirectories(file.getParent());
        Files.writeString(file, report.toString(), StandardCharsets.UTF_8);
        out.println(report);
        out.println("written: " + file.toAbsolutePath());
    }

    private Relock relockClient() {
        return RelockZooKeeper.builder(server.getConnectString()).root("/bench/relock").sessionTimeout(SESSION)
                .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
                        .releaseOnShutdown(false).build())
                .build();
    }

    private Library relock() {
        Relock relock = relockClient();
        return new Library() {
            @Override
            public Lock lock(String name) {
                return relock.getLock(name);
            }

            @Override
            public void close() {
                relock.close();
            }
        };
    }

    private CuratorFramework curator() {
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
                .sessionTimeoutMs((int) SESSION.toMillis()).retryPolicy(new RetryUntilElapsed(10_000, 50)).build();
        curator.start();
        try {
            curator.blockUntilConnected();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return curator;
    }

    /** Curator's mutex as a {@link Lock}: one {@code InterProcessMutex} per name, shared by the client's threads. */
    private Library curatorMutex() {
        CuratorFramework curator = curator();
        Map<String, InterProcessMutex> mutexes = new java.util.concurrent.ConcurrentHashMap<>();
        return new Library() {
            @Override
            public Lock lock(String name) {
                InterProcessMutex mutex = mutexes.computeIfAbsent(name,
                        n -> new InterProcessMutex(curator, "/bench/curator/" + n));
                return new MutexLock(mutex);
            }

            @Override
            public void close() {
                curator.close();
            }
        };
    }

    private static final class MutexLock implements Lock {
        private final InterProcessMutex mutex;

        MutexLock(InterProcessMutex mutex) {
            this.mutex = mutex;
        }

        @Override
        public void lock() {
            try {
                mutex.acquire();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            try {
                mutex.release();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void lockInterruptibly() {
            lock();
        }

        @Override
        public boolean tryLock() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.concurrent.locks.Condition newCondition() {
            throw new UnsupportedOperationException();
        }
    }

    private void uncontended(Map<String, Supplier<Library>> libraries) throws Exception {
        report.append("## Z1 uncontended: cycles/s (ZooKeeper requests per cycle)\n\n| threads |");
        libraries.keySet().forEach(name -> report.append(' ').append(name).append(" |"));
        report.append(" Relock ÷ InterProcessMutex | goal ≥ 1× |\n|---|");
        libraries.keySet().forEach(name -> report.append("---|"));
        report.append("---|---|\n");
        List<String> names = new ArrayList<>(libraries.keySet());
        // Warm-up, not reported: the JIT has compiled every library's path (and the server's)
        // before the first measured case, so the library measured first is not the cold one.
        for (String name : names) {
            try (Library client = libraries.get(name).get()) {
                BenchThreads.run(1, seconds, t -> {
                    Lock lock = client.lock("z1-warm-up");
                    return () -> {
                        lock.lock();
                        lock.unlock();
                    };
                });
            }
        }
        for (int threads : new int[] {1, 8, 64}) {
            report.append("| ").append(threads).append(" |");
            Map<String, double[]> rates = new LinkedHashMap<>();
            Map<String, Double> requests = new LinkedHashMap<>();
            names.forEach(name -> rates.put(name, new double[repeats]));
            for (int r = 0; r < repeats; r++) {
                int run = r;
                // Each repeat takes the libraries in the other order: neither always runs first.
                List<String> order = new ArrayList<>(names);
                if (r % 2 == 1) {
                    java.util.Collections.reverse(order);
                }
                for (String name : order) {
                    try (Library client = libraries.get(name).get()) {
                        AtomicLong cycles = new AtomicLong();
                        long before = ZooKeeperRequests.received(server.getPort());
                        BenchThreads.run(threads, seconds, t -> {
                            Lock lock = client.lock("z1-" + threads + "-" + run + "-" + t);
                            return () -> {
                                lock.lock();
                                lock.unlock();
                                cycles.incrementAndGet();
                            };
                        });
                        requests.put(name, (ZooKeeperRequests.received(server.getPort()) - before - 1) / (double) Math.max(1, cycles.get()));
                        rates.get(name)[r] = cycles.get() / (double) seconds;
                    }
                }
            }
            for (String name : names) {
                report.append(String.format(Locale.ROOT, " %,.0f (%.2f) |", BenchThreads.median(rates.get(name)), requests.get(name)));
                out.printf(Locale.ROOT, "Z1/t%d %s: %.0f cycles/s, %.2f requests/cycle%n", threads, name,
                        BenchThreads.median(rates.get(name)), requests.get(name));
            }
            double[] ratios = BenchThreads.ratios(rates.get("Relock"), rates.get("InterProcessMutex"));
            double ratio = BenchThreads.median(ratios);
            report.append(String.format(Locale.ROOT, " %.2f× | %s |%n", ratio, ratio >= 1 ? "met" : "not met"));
            out.printf(Locale.ROOT, "Z1/t%d Relock ÷ InterProcessMutex per repeat: %s%n", threads,
                    java.util.Arrays.toString(java.util.Arrays.stream(ratios).map(x -> Math.round(x * 100) / 100.0).toArray()));
        }
        report.append("\nRequests are the server's count over the case, pings and the first cycle's parent "
                + "creation included. A ratio is the median of the repeats' ratios, each of two runs made one after "
                + "the other.\n\n");
    }

    private void contended(Map<String, Supplier<Library>> libraries) throws Exception {
        report.append("## Z2 contended, 4 clients × 2 threads on one lock: acquisitions/s\n\n| ");
        libraries.keySet().forEach(name -> report.append(name).append(" | "));
        report.append("ratio | goal ≥ 1× |\n|");
        libraries.keySet().forEach(name -> report.append("---|"));
        report.append("---|---|\n|");
        List<String> names = new ArrayList<>(libraries.keySet());
        Map<String, double[]> perRun = new LinkedHashMap<>();
        names.forEach(name -> perRun.put(name, new double[repeats]));
        for (int r = 0; r < repeats; r++) {
            List<String> order = new ArrayList<>(names);
            if (r % 2 == 1) {
                java.util.Collections.reverse(order);
            }
            for (String name : order) {
                List<Library> clients = new ArrayList<>();
                try {
                    for (int c = 0; c < 4; c++) {
                        clients.add(libraries.get(name).get());
                    }
                    AtomicLong acquisitions = new AtomicLong();
                    String lockName = "z2-" + r;
                    BenchThreads.run(8, seconds, t -> {
                        Lock lock = clients.get(t % 4).lock(lockName);
                        return () -> {
                            lock.lock();
                            lock.unlock();
                            acquisitions.incrementAndGet();
                        };
                    });
                    perRun.get(name)[r] = acquisitions.get() / (double) seconds;
                } finally {
                    clients.forEach(Library::close);
                }
            }
        }
        Map<String, Double> rates = new LinkedHashMap<>();
        for (String name : names) {
            rates.put(name, BenchThreads.median(perRun.get(name)));
            report.append(String.format(Locale.ROOT, " %,.0f |", rates.get(name)));
            out.printf(Locale.ROOT, "Z2 %s: %.0f/s%n", name, rates.get(name));
        }
        double[] ratios = BenchThreads.ratios(perRun.get("Relock"), perRun.get("InterProcessMutex"));
        double ratio = BenchThreads.median(ratios);
        report.append(String.format(Locale.ROOT, " %.2f× | %s |%n%n", ratio, ratio >= 1 ? "met" : "not met"));
        out.printf(Locale.ROOT, "Z2 Relock ÷ InterProcessMutex per repeat: %s%n",
                java.util.Arrays.toString(java.util.Arrays.stream(ratios).map(x -> Math.round(x * 100) / 100.0).toArray()));
    }

    private void handOff(Map<String, Supplier<Library>> libraries) throws Exception {
        report.append("## Z3 cross-client hand-off: release to acquire, ms\n\n| | p50 | p90 |\n|---|---|---|\n");
        Map<String, Double> p50s = new LinkedHashMap<>();
        for (var library : libraries.entrySet()) {
            double[] latencies;
            try (Library a = library.getValue().get(); Library b = library.getValue().get()) {
                latencies = BenchThreads.handOffs(rounds, i -> (i % 2 == 0 ? a : b).lock("z3"),
                        i -> (i % 2 == 0 ? b : a).lock("z3"));
            }
            Arrays.sort(latencies);
            double p50 = latencies[rounds / 2];
            p50s.put(library.getKey(), p50);
            report.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f |%n", library.getKey(), p50,
                    latencies[(int) (rounds * 0.9)]));
            out.printf(Locale.ROOT, "Z3 %s: p50 %.2f ms%n", library.getKey(), p50);
        }
        double ratio = p50s.get("Relock") / p50s.get("InterProcessMutex");
        report.append(String.format(Locale.ROOT, "%nRelock's p50 is %.2f× InterProcessMutex's; goal ≤ 1×: %s.%n%n",
                ratio, ratio <= 1 ? "met" : "not met"));
    }

    /** Z4: a leader closes; the time until the other candidate is elected (its listener called). */
    private void failover() throws Exception {
        int tries = Math.max(5, rounds / 10);
        double[] relock = new double[tries];
        double[] latch = new double[tries];
        for (int i = 0; i < tries; i++) {
            relock[i] = relockFailover("z4-" + i);
            latch[i] = latchFailover("/bench/latch/z4-" + i);
        }
        Arrays.sort(relock);
        Arrays.sort(latch);
        report.append("## Z4 failover: the leader closes, the next candidate is elected, ms (").append(tries)
                .append(" rounds)\n\n| | p50 | max |\n|---|---|---|\n")
                .append(String.format(Locale.ROOT, "| Relock LeaderElection | %.2f | %.2f |%n", relock[tries / 2],
                        relock[tries - 1]))
                .append(String.format(Locale.ROOT, "| Curator LeaderLatch | %.2f | %.2f |%n%n", latch[tries / 2],
                        latch[tries - 1]));
        out.printf(Locale.ROOT, "Z4: Relock p50 %.2f ms, LeaderLatch p50 %.2f ms%n", relock[tries / 2],
                latch[tries / 2]);
    }

    private double relockFailover(String name) throws Exception {
        try (Relock first = relockClient(); Relock second = relockClient()) {
            CompletableFuture<Void> firstElected = new CompletableFuture<>();
            AtomicLong secondElectedAt = new AtomicLong();
            CompletableFuture<Void> secondElected = new CompletableFuture<>();
            LeaderElection leader = first.getLeaderElection(name);
            leader.start(listener(() -> firstElected.complete(null)));
            firstElected.get(30, TimeUnit.SECONDS);
            LeaderElection next = second.getLeaderElection(name);
            next.start(listener(() -> {
                secondElectedAt.set(System.nanoTime());
                secondElected.complete(null);
            }));
            // Time for the second candidate to queue behind the leader.
            TimeUnit.MILLISECONDS.sleep(50);
            long closedAt = System.nanoTime();
            leader.close();
            secondElected.get(30, TimeUnit.SECONDS);
            next.close();
            return (secondElectedAt.get() - closedAt) / 1e6;
        }
    }

    private static LeadershipListener listener(Runnable onElected) {
        return new LeadershipListener() {
            @Override
            public void onElected(Leadership leadership) {
                onElected.run();
            }

            @Override
            public void onRevoked(Leadership leadership) {
                // The bench only times elections.
            }
        };
    }

    private double latchFailover(String path) throws Exception {
        try (CuratorFramework a = curator(); CuratorFramework b = curator()) {
            LeaderLatch first = new LeaderLatch(a, path, "a");
            first.start();
            first.await(30, TimeUnit.SECONDS);
            LeaderLatch second = new LeaderLatch(b, path, "b");
            AtomicLong electedAt = new AtomicLong();
            CountDownLatch elected = new CountDownLatch(1);
            second.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    electedAt.set(System.nanoTime());
                    elected.countDown();
                }

                @Override
                public void notLeader() {
                    // The bench only times elections.
                }
            });
            second.start();
            TimeUnit.MILLISECONDS.sleep(50);
            long closedAt = System.nanoTime();
            first.close();
            if (!elected.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("LeaderLatch elected nobody after the leader closed");
            }
            second.close();
            return (electedAt.get() - closedAt) / 1e6;
        }
    }
}
