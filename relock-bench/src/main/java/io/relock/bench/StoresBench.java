package io.relock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.jdbc.RelockJdbc;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.MariaDbServer;
import io.relock.testkit.PostgresServer;
import io.relock.testkit.RedisServer;
import io.relock.zookeeper.RelockZooKeeper;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.curator.test.TestingServer;

/**
 * The classic comparison of lock stores, run on Relock's four back ends
 * side by side in one run, on servers this JVM starts: Redis, PostgreSQL, MariaDB (when its
 * binaries are found) and ZooKeeper. Each store gets the same clients (lease or session
 * {@value #LEASE_SECONDS} s) and the same cases:
 *
 * <ul>
 *   <li>the four conditions of a distributed lock, checked: exclusion (1 000 threads in 4 clients
 *       incrementing one unguarded counter), no deadlock (a holder cut off without a word: when it
 *       hears of its loss, when the next client gets in), only the owner unlocks (another client's
 *       {@code unlock()}), re-entry (requests it costs);
 *   <li>the cost of a lock: an uncontended cycle's latency (p50, p99) and the store requests it
 *       takes, 8 threads' throughput, and a cross-client hand-off's p50.
 * </ul>
 *
 * <p>{@code mvn -q -B -Pstores-bench -DskipTests verify [-Dstores.args="--seconds 3"]}; writes
 * {@code results/stores-latest.md}.
 */
public final class StoresBench {

    private static final int LEASE_SECONDS = 4;
    private static final Duration LEASE = Duration.ofSeconds(LEASE_SECONDS);
    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 250;
    private static final int CYCLES = 2_000;
    private static final int HAND_OFFS = 100;

    private final int seconds;
    private final PrintStream out = System.out;
    private final Map<String, Map<String, String>> rows = new LinkedHashMap<>();
    private final List<String> stores = new ArrayList<>();

    private StoresBench(int seconds) {
        this.seconds = seconds;
    }

    public static void main(String[] args) throws Exception {
        int seconds = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (known: --seconds N)");
            }
        }
        new StoresBench(seconds).run();
    }

    /** One back end: how to make a client on it, directly or through a proxy, and its request count. */
    private interface Store extends AutoCloseable {
        String name();

        /** A client on the store, or through {@code proxy} when not null; closed with the store. */
        Relock client(FaultProxy proxy);

        /** The server's port, for a proxy in front of it. */
        int port();

        /** Requests the server has received so far, by its own count (the JDBC driver's, for SQL). */
        long requests();

        /** How the store keeps a lock through its own failures: what the tests and runs show. */
        String faultTolerance();

        @Override
        void close();
    }

    private void run() throws Exception {
        try (RedisServer redis = RedisServer.start(); Store store = redis(redis)) {
            measure(store);
        }
        try (PostgresServer postgres = PostgresServer.launch();
                Store store = database("PostgreSQL", postgres.createDatabase(), postgres.port(),
                        "a committed row: a server restart keeps it (tested); as safe as the database's own"
                                + " replication and failover")) {
            measure(store);
        }
        if (MariaDbServer.binary().isPresent()) {
            try (MariaDbServer maria = MariaDbServer.launch();
                    Store store = database("MariaDB", maria.createDatabase(), maria.port(),
                            "a committed row: a server restart keeps it (tested); as safe as the database's own"
                                    + " replication and failover")) {
                measure(store);
            }
        }
        try (TestingServer zookeeper = new TestingServer(true); Store store = zookeeper(zookeeper)) {
            measure(store);
        }
        write();
    }

    private void measure(Store store) throws Exception {
        out.println("== " + store.name());
        stores.add(store.name());
        exclusion(store);
        crash(store);
        ownerOnly(store);
        reentry(store);
        cost(store);
        row("fault tolerance of the store", store, store.faultTolerance());
    }

    private void row(String what, Store store, String value) {
        rows.computeIfAbsent(what, k -> new LinkedHashMap<>()).put(store.name(), value);
        out.println("  " + what + ": " + value);
    }

    /** 1 000 threads in 4 clients, each once: read the counter, yield, write it plus one; nobody else inside. */
    private void exclusion(Store store) throws Exception {
        List<Relock> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            clients.add(store.client(null));
        }
        int[] counter = new int[1];
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < CLIENTS * THREADS_PER_CLIENT; t++) {
            DistributedLock lock = clients.get(t % CLIENTS).getLock("stores:exclusion");
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    lock.lock();
                    try {
                        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        int seen = counter[0];
                        Thread.yield();
                        counter[0] = seen + 1;
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                } catch (InterruptedException | RuntimeException e) {
                    failures.incrementAndGet();
                }
            });
            thread.start();
            threads.add(thread);
        }
        long began = System.nanoTime();
        start.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
        double elapsed = (System.nanoTime() - began) / 1e9;
        int total = CLIENTS * THREADS_PER_CLIENT;
        // The joins order the threads' writes of the counter before this read.
        row("exclusion: 1 000 threads in 4 clients, one unguarded counter", store, String.format(Locale.ROOT,
                "%d of %d increments kept, at most %d inside, %d failed; %.1f s", counter[0], total,
                mostInside.get(), failures.get(), elapsed));
    }

    /**
     * A holder behind a proxy that starts swallowing everything, as a crashed machine or a cut
     * cable does: when its client tells it the hold is lost, and when another client's waiting
     * {@code lock()} returns, both from the cut.
     */
    private void crash(Store store) throws Exception {
        try (FaultProxy proxy = FaultProxy.to(FaultProxy.HOST, store.port())) {
            Relock holderClient = store.client(proxy);
            Relock otherClient = store.client(null);
            AtomicLong lostAt = new AtomicLong();
            CountDownLatch lost = new CountDownLatch(1);
            holderClient.addLockListener(event -> {
                lostAt.set(System.nanoTime());
                lost.countDown();
            });
            DistributedLock held = holderClient.getLock("stores:crash");
            held.lock();
            long cutAt = System.nanoTime();
            proxy.blackhole();
            boolean acquired = otherClient.getLock("stores:crash").tryLock(60, TimeUnit.SECONDS);
            long acquiredAt = System.nanoTime();
            boolean told = lost.await(60, TimeUnit.SECONDS);
            proxy.heal();
            row("no deadlock: a holder cut off (" + LEASE_SECONDS + " s lease or session)", store,
                    (told ? String.format(Locale.ROOT, "holder told after %.1f s", (lostAt.get() - cutAt) / 1e9)
                            : "holder not told within 60 s")
                            + "; " + (acquired ? String.format(Locale.ROOT, "the next client in after %.1f s",
                                    (acquiredAt - cutAt) / 1e9) : "nobody else got in within 60 s"));
            if (acquired) {
                otherClient.getLock("stores:crash").unlock();
            }
        }
    }

    /** Another client's {@code unlock()} of a held lock. */
    private void ownerOnly(Store store) {
        Relock owner = store.client(null);
        Relock other = store.client(null);
        DistributedLock lock = owner.getLock("stores:owner");
        lock.lock();
        String answer;
        try {
            other.getLock("stores:owner").unlock();
            answer = "released by another client";
        } catch (IllegalMonitorStateException e) {
            answer = "IllegalMonitorStateException";
        }
        boolean stillHeld = lock.isHeldByCurrentThread() && other.getLockInfo("stores:owner").isLocked();
        lock.unlock();
        row("only the owner unlocks: another client's unlock()", store,
                answer + (stillHeld ? "; the owner still holds it" : "; the owner lost it"));
    }

    /** The requests a re-entry and its release cost. */
    private void reentry(Store store) {
        DistributedLock lock = store.client(null).getLock("stores:reentry");
        lock.lock();
        long before = store.requests();
        lock.lock();
        lock.unlock();
        long requests = store.requests() - before;
        boolean held = lock.isHeldByCurrentThread();
        lock.unlock();
        row("re-entry: requests for lock() and unlock() inside a hold", store,
                requests + (held ? "; still held after the inner unlock()" : "; released by the inner unlock()"));
    }

    /** An uncontended cycle's latency and requests, 8 threads' throughput, a cross-client hand-off. */
    private void cost(Store store) throws Exception {
        Relock client = store.client(null);
        DistributedLock lock = client.getLock("stores:cost");
        for (int i = 0; i < CYCLES / 4; i++) {
            lock.lock();
            lock.unlock();
        }
        double[] millis = new double[CYCLES];
        long before = store.requests();
        for (int i = 0; i < CYCLES; i++) {
            long began = System.nanoTime();
            lock.lock();
            lock.unlock();
            millis[i] = (System.nanoTime() - began) / 1e6;
        }
        double requests = (store.requests() - before) / (double) CYCLES;
        row("uncontended lock() + unlock(), 1 thread: p50 / p99", store, String.format(Locale.ROOT,
                "%.2f / %.2f ms", BenchThreads.median(millis), BenchThreads.percentile(millis, 0.99)));
        row("store requests per uncontended cycle", store, String.format(Locale.ROOT, "%.2f", requests));

        AtomicLong cycles = new AtomicLong();
        BenchThreads.run(8, seconds, t -> {
            DistributedLock own = client.getLock("stores:throughput:" + t);
            return () -> {
                own.lock();
                own.unlock();
                cycles.incrementAndGet();
            };
        });
        row("uncontended, 8 threads on locks of their own", store,
                String.format(Locale.ROOT, "%,.0f cycles/s", cycles.get() / (double) seconds));

        Relock other = store.client(null);
        double[] handOffs = BenchThreads.handOffs(HAND_OFFS,
                i -> (i % 2 == 0 ? client : other).getLock("stores:hand-off"),
                i -> (i % 2 == 0 ? other : client).getLock("stores:hand-off"));
        row("cross-client hand-off, release to the waiter's acquire: p50", store,
                String.format(Locale.ROOT, "%.2f ms", BenchThreads.median(handOffs)));
    }

    private void write() throws Exception {
        StringBuilder report = new StringBuilder();
        report.append("# The lock stores side by side: Redis, PostgreSQL, MariaDB, ZooKeeper\n\n")
                .append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores; every server on this machine, started by the run; Relock's default settings but a ")
                .append(LEASE_SECONDS).append(" s lease (watchdog timeout) or session. Reproduce: ")
                .append("`mvn -q -B -Pstores-bench -DskipTests verify -Dstores.args=\"--seconds ").append(seconds)
                .append("\"`.\n\n| | ").append(String.join(" | ", stores)).append(" |\n|---|")
                .append("---|".repeat(stores.size())).append('\n');
        for (Map.Entry<String, Map<String, String>> row : rows.entrySet()) {
            report.append("| ").append(row.getKey()).append(" |");
            for (String store : stores) {
                report.append(' ').append(row.getValue().getOrDefault(store, "")).append(" |");
            }
            report.append('\n');
        }
        Path file = Path.of("results", "stores-latest.md");
        Files.createDirectories(file.getParent());
        Files.writeString(file, report.toString(), StandardCharsets.UTF_8);
        out.println(report);
        out.println("written: " + file.toAbsolutePath());
    }

    private static RelockConfig.Builder settings(String server) {
        return RelockConfig.builder().singleServer(server).watchdogTimeout(LEASE).releaseOnShutdown(false);
    }

    private static Store redis(RedisServer server) {
        RedisAdmin admin = new RedisAdmin(server.uri());
        // Script calls: INFO commandstats also counts the commands a script runs, and every lock call is one script.
        return new Clients("Redis", server.port(), () -> admin.stats().scriptCalls(),
                "asynchronous replication: a failover can lose a hold the old master acknowledged"
                        + " (replica-sync narrows it, RedLock needs a majority of masters; measured in the failover run)") {
            @Override
            Relock open(FaultProxy proxy) {
                return Relock.create(settings(proxy == null ? server.uri() : proxy.uri()).build());
            }
        };
    }

    private static Store database(String name, String url, int port, String tolerance) {
        List<CountingDataSource> counted = new ArrayList<>();
        List<HikariDataSource> pools = new ArrayList<>();
        return new Clients(name, port, () -> counted.stream().mapToLong(CountingDataSource::statements).sum(),
                tolerance) {
            private boolean tableCreated;

            @Override
            Relock open(FaultProxy proxy) {
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(proxy == null ? url
                        : url.replaceFirst("//[^/]+/", "//" + proxy.host() + ":" + proxy.port() + "/"));
                config.setMaximumPoolSize(8);
                config.setConnectionTimeout(LEASE.toMillis());
                HikariDataSource pool = new HikariDataSource(config);
                pools.add(pool);
                CountingDataSource counting = new CountingDataSource(pool);
                counted.add(counting);
                Relock relock = RelockJdbc.builder(counting.dataSource()).createTable(!tableCreated)
                        .config(settings(RelockJdbc.PLACEHOLDER_SERVER).build()).build();
                tableCreated = true;
                return relock;
            }

            @Override
            public void close() {
                super.close();
                pools.forEach(HikariDataSource::close);
            }
        };
    }

    private static Store zookeeper(TestingServer server) {
        // Each srvr question is itself one request the server counts.
        AtomicLong questions = new AtomicLong();
        return new Clients("ZooKeeper", server.getPort(),
                () -> ZooKeeperRequests.received(server.getPort()) - questions.incrementAndGet(),
                "a quorum write: holds survive the leader's loss, and nobody acquires without a quorum"
                        + " (tested on 3 servers)") {
            @Override
            Relock open(FaultProxy proxy) {
                String connect = proxy == null ? server.getConnectString() : proxy.host() + ":" + proxy.port();
                return RelockZooKeeper.builder(connect).root("/bench/stores").sessionTimeout(LEASE)
                        .config(settings(RelockZooKeeper.PLACEHOLDER_SERVER).build()).build();
            }
        };
    }

    /** A store's clients, all closed with it. */
    private abstract static class Clients implements Store {
        private final String name;
        private final int port;
        private final LongSupplier requests;
        private final String tolerance;
        private final List<Relock> clients = new ArrayList<>();

        Clients(String name, int port, LongSupplier requests, String tolerance) {
            this.name = name;
            this.port = port;
            this.requests = requests;
            this.tolerance = tolerance;
        }

        abstract Relock open(FaultProxy proxy);

        @Override
        public String name() {
            return name;
        }

        @Override
        public Relock client(FaultProxy proxy) {
            Relock client = open(proxy);
            clients.add(client);
            return client;
        }

        @Override
        public int port() {
            return port;
        }

        @Override
        public long requests() {
            return requests.getAsLong();
        }

        @Override
        public String faultTolerance() {
            return tolerance;
        }

        @Override
        public void close() {
            clients.forEach(Relock::close);
        }
    }

    static {
        // Keep the servers' and the libraries' logs out of the report.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
}
