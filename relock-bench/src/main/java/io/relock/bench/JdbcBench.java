package io.relock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.jdbc.RelockJdbc;
import io.relock.testkit.MariaDbServer;
import io.relock.testkit.PostgresServer;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Relock on a database beside the JDBC locks teams use today, in one run on the same servers:
 * Spring Integration's {@code JdbcLockRegistry} and, where it applies (it never waits), ShedLock's
 * JDBC provider. PostgreSQL always (from Maven jars), MariaDB installed or from its Maven jar. Each client
 * has a pool of its own (HikariCP, 16 connections); every case runs {@code --repeats} times and
 * reports the median.
 *
 * <ul>
 *   <li>J1 uncontended: 1, 8 and 64 threads of one client, each on a lock of its own: cycles/s,
 *       and statements per cycle (counted at the JDBC driver: every execute and every commit);
 *   <li>J2 contended: 4 clients × 2 threads on one lock: acquisitions/s;
 *   <li>J3 cross-client hand-off: a holder in one client releases, a waiter in another client
 *       (already waiting in {@code lock()}) gets the lock: p50 and p90 of release-to-acquire.
 * </ul>
 *
 * <p>{@code mvn -q -B -Pjdbc-bench -DskipTests verify -Djdbc.args="--seconds 3 --repeats 3"};
 * writes {@code results/jdbc-latest.md}.
 */
public final class JdbcBench {

    private static final int POOL = 16;
    private static final com.sun.management.OperatingSystemMXBean CLIENT_CPU =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private final int seconds;
    private final int repeats;
    private final int handOffs;
    private final int[] threadCounts;
    private final boolean uncontendedOnly;
    private final PrintStream out = System.out;
    private final StringBuilder report = new StringBuilder();

    private JdbcBench(int seconds, int repeats, int handOffs, int[] threadCounts, boolean uncontendedOnly) {
        this.seconds = seconds;
        this.repeats = repeats;
        this.handOffs = handOffs;
        this.threadCounts = threadCounts;
        this.uncontendedOnly = uncontendedOnly;
    }

    public static void main(String[] args) throws Exception {
        int seconds = 3;
        int repeats = 3;
        int handOffs = 200;
        int[] threadCounts = {1, 8, 64};
        boolean uncontendedOnly = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--hand-offs" -> handOffs = Integer.parseInt(args[++i]);
                case "--threads" -> threadCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt)
                        .toArray();
                case "--j1-only" -> uncontendedOnly = true;
                case "--quick" -> {
                    seconds = 1;
                    repeats = 1;
                    handOffs = 50;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (known: --seconds N, --repeats N, --hand-offs N, --threads N,N,..., --j1-only, --quick)");
            }
        }
        new JdbcBench(seconds, repeats, handOffs, threadCounts, uncontendedOnly).run();
    }

    private void run() throws Exception {
        report.append("# JDBC bench: Relock beside JdbcLockRegistry and ShedLock\n\n")
                .append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores; ").append(seconds).append(" s per case, median of ").append(repeats)
                .append(" runs (J1: each library's client kept across a case's runs, after a warm-up of each; the"
                        + " repeats taking the libraries in turns)")
                .append("; pools of ").append(POOL).append(" connections per client. Reproduce: ")
                .append("`mvn -q -B -Pjdbc-bench -DskipTests verify -Djdbc.args=\"--seconds ").append(seconds)
                .append(" --repeats ").append(repeats).append("\"`.\n\n");
        try (PostgresServer postgres = PostgresServer.launch()) {
            database("PostgreSQL 17", postgres::createDatabase, postgres::cpuTime, 0.1);
        }
        Optional<MariaDbServer.Binary> maria = MariaDbServer.binary();
        if (maria.isPresent()) {
            try (MariaDbServer server = MariaDbServer.launch()) {
                database("MariaDB (" + server.binaryInUse().server() + ")", server::createDatabase, server::cpuTime,
                        0.5);
            }
        } else {
            report.append("## MariaDB\n\nNot run: no MariaDB binaries on this machine.\n\n");
        }
        Path file = Path.of("results", "jdbc-latest.md");
        Files.createDirectories(file.getParent());
        Files.writeString(file, report.toString(), StandardCharsets.UTF_8);
        out.println(report);
        out.println("written: " + file.toAbsolutePath());
    }

    /** The libraries of one client each, on a data source of their own. */
    private interface Library extends AutoCloseable {
        Lock lock(String name);

        /** ShedLock: a lock that never waits. */
        default boolean waits() {
            return true;
        }

        @Override
        void close();
    }

    private void database(String title, Supplier<String> newDatabase, Supplier<Duration> serverCpu,
            double handOffGoal) throws Exception {
        String url = newDatabase.get();
        boolean postgres = url.startsWith("jdbc:postgresql:");
        try (HikariDataSource setup = pool(url, 2)) {
            createPeerTables(setup, postgres);
            new JdbcTemplate(setup).execute(RelockJdbc.ddl(postgres ? "PostgreSQL" : "MariaDB", "relock_lock"));
        }
        Map<String, Function<DataSource, Library>> libraries = new LinkedHashMap<>();
        libraries.put("Relock", JdbcBench::relock);
        libraries.put("JdbcLockRegistry", JdbcBench::registry);
        libraries.put("ShedLock", JdbcBench::shedLock);
        report.append("## ").append(title).append("\n\n");

        report.append("### J1 uncontended: cycles/s (statements per cycle; CPU µs per cycle, client + database)\n\n"
                + "| threads |");
        libraries.keySet().forEach(name -> report.append(' ').append(name).append(" |"));
        report.append(" Relock ÷ JdbcLockRegistry | goal ≥ 1.5× |\n|---|");
        libraries.keySet().forEach(name -> report.append("---|"));
        report.append("---|---|\n");
        List<String> names = new ArrayList<>(libraries.keySet());
        for (int threads : threadCounts) {
            report.append("| ").append(threads).append(" |");
            Map<String, double[]> perRun = new LinkedHashMap<>();
            Map<String, Double> statements = new LinkedHashMap<>();
            Map<String, double[]> clientCpu = new LinkedHashMap<>();
            Map<String, double[]> databaseCpu = new LinkedHashMap<>();
            Map<String, Client> clients = new LinkedHashMap<>();
            try {
                for (String name : names) {
                    perRun.put(name, new double[repeats]);
                    clientCpu.put(name, new double[repeats]);
                    databaseCpu.put(name, new double[repeats]);
                    clients.put(name, new Client(url, libraries.get(name)));
                }
                // Warm-up, not reported: the JIT has compiled every library's path and each pool
                // has its connections before the first measured run.
                for (String name : names) {
                    uncontended(clients.get(name), threads, "warm-up", serverCpu);
                }
                for (int r = 0; r < repeats; r++) {
                    // Each repeat takes the libraries in another order, one right after the other,
                    // so that every repeat's ratio compares runs of the same minutes of the machine.
                    List<String> order = new ArrayList<>(names);
                    java.util.Collections.rotate(order, r);
                    for (String name : order) {
                        double[] result = uncontended(clients.get(name), threads, Integer.toString(r), serverCpu);
                        perRun.get(name)[r] = result[0];
                        statements.put(name, result[1]);
                        clientCpu.get(name)[r] = result[2];
                        databaseCpu.get(name)[r] = result[3];
                    }
                }
            } finally {
                clients.values().forEach(Client::close);
            }
            for (String name : names) {
                double rate = BenchThreads.median(perRun.get(name));
                double client = BenchThreads.median(clientCpu.get(name));
                double database = BenchThreads.median(databaseCpu.get(name));
                report.append(String.format(Locale.ROOT, " %,.0f (%.1f; %.0f + %.0f) |", rate, statements.get(name),
                        client, database));
                out.printf(Locale.ROOT, "%s J1/t%d %s: %.0f cycles/s, %.2f statements/cycle, CPU/cycle %.0f µs client"
                        + " + %.0f µs database%n", title, threads, name, rate, statements.get(name), client, database);
            }
            double[] ratios = BenchThreads.ratios(perRun.get("Relock"), perRun.get("JdbcLockRegistry"));
            double ratio = BenchThreads.median(ratios);
            report.append(String.format(Locale.ROOT, " %.2f× | %s |%n", ratio, ratio >= 1.5 ? "met" : "not met"));
            out.printf(Locale.ROOT, "%s J1/t%d Relock ÷ JdbcLockRegistry per repeat: %s%n", title, threads,
                    Arrays.toString(Arrays.stream(ratios).map(x -> Math.round(x * 100) / 100.0).toArray()));
        }
        report.append("\nThe ratio is the median of the repeats' ratios, each of two runs made one after the other.\n");

        if (uncontendedOnly) {
            report.append('\n');
            return;
        }
        report.append("\n### J2 contended, 4 clients × 2 threads on one lock: acquisitions/s\n\n")
                .append("| Relock | JdbcLockRegistry | ratio |\n|---|---|---|\n");
        double[] relockRuns = new double[repeats];
        double[] registryRuns = new double[repeats];
        for (int r = 0; r < repeats; r++) {
            // One after the other, in turns, as in J1.
            if (r % 2 == 0) {
                relockRuns[r] = contended(url, JdbcBench::relock, r);
                registryRuns[r] = contended(url, JdbcBench::registry, r);
            } else {
                registryRuns[r] = contended(url, JdbcBench::registry, r);
                relockRuns[r] = contended(url, JdbcBench::relock, r);
            }
        }
        double relockContended = BenchThreads.median(relockRuns);
        double registryContended = BenchThreads.median(registryRuns);
        report.append(String.format(Locale.ROOT, "| %,.0f | %,.0f | %.2f× |%n", relockContended, registryContended,
                BenchThreads.median(BenchThreads.ratios(relockRuns, registryRuns))));
        out.printf(Locale.ROOT, "%s J2: Relock %.0f/s, JdbcLockRegistry %.0f/s%n", title, relockContended,
                registryContended);

        report.append("\n### J3 cross-client hand-off: release to acquire, ms\n\n")
                .append("| | p50 | p90 |\n|---|---|---|\n");
        double[] relockHandOff = handOff(url, JdbcBench::relock);
        double[] registryHandOff = handOff(url, JdbcBench::registry);
        report.append(String.format(Locale.ROOT, "| Relock | %.2f | %.2f |%n| JdbcLockRegistry | %.2f | %.2f |%n",
                relockHandOff[0], relockHandOff[1], registryHandOff[0], registryHandOff[1]));
        double ratio = relockHandOff[0] / registryHandOff[0];
        report.append(String.format(Locale.ROOT, "%nRelock's p50 is %.3f× JdbcLockRegistry's; goal ≤ %.1f×: %s.%n%n",
                ratio, handOffGoal, ratio <= handOffGoal ? "met" : "not met"));
        out.printf(Locale.ROOT, "%s J3: Relock p50 %.2f ms, JdbcLockRegistry p50 %.2f ms%n", title, relockHandOff[0],
                registryHandOff[0]);
    }

    private static void createPeerTables(DataSource dataSource, boolean postgres) throws SQLException {
        String time = postgres ? "TIMESTAMP" : "DATETIME(6)";
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            // Spring Integration 7.1's INT_LOCK, from its schema-*.sql.
            s.execute("CREATE TABLE INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36),"
                    + " CREATED_DATE " + time + " NOT NULL, EXPIRED_AFTER " + time + " NOT NULL,"
                    + " CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))");
            // ShedLock's table, from its README.
            s.execute("CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until " + time + " NOT NULL,"
                    + " locked_at " + time + " NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
        }
    }

    private static HikariDataSource pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        return new HikariDataSource(config);
    }

    private static Library relock(DataSource dataSource) {
        Relock relock = RelockJdbc.builder(dataSource).statementThreads(POOL - 2)
                .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER).releaseOnShutdown(false)
                        .build())
                .build();
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

    private static Library registry(DataSource dataSource) {
        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository);
        return new Library() {
            @Override
            public Lock lock(String name) {
                return registry.obtain(name);
            }

            @Override
            public void close() {
                repository.close();
            }
        };
    }

    private static Library shedLock(DataSource dataSource) {
        JdbcTemplateLockProvider provider = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(dataSource)).usingDbTime().build());
        return new Library() {
            @Override
            public Lock lock(String name) {
                return new ShedLockLock(provider, name);
            }

            @Override
            public boolean waits() {
                return false;
            }

            @Override
            public void close() {
                // Nothing to close: the provider holds no resources of its own.
            }
        };
    }

    /** ShedLock as a {@link Lock} of one attempt: {@code tryLock()} and {@code unlock()} only. */
    private static final class ShedLockLock implements Lock {
        private final JdbcTemplateLockProvider provider;
        private final String name;
        private SimpleLock held;

        ShedLockLock(JdbcTemplateLockProvider provider, String name) {
            this.provider = provider;
            this.name = name;
        }

        @Override
        public boolean tryLock() {
            Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30),
                    Duration.ZERO));
            held = lock.orElse(null);
            return held != null;
        }

        @Override
        public void unlock() {
            held.unlock();
            held = null;
        }

        @Override
        public void lock() {
            throw new UnsupportedOperationException("ShedLock never waits");
        }

        @Override
        public void lockInterruptibly() {
            throw new UnsupportedOperationException("ShedLock never waits");
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) {
            throw new UnsupportedOperationException("ShedLock never waits");
        }

        @Override
        public java.util.concurrent.locks.Condition newCondition() {
            throw new UnsupportedOperationException();
        }
    }

    /** One J1 client: a library on a pool of its own, kept across the repeats of one case. */
    private static final class Client implements AutoCloseable {
        final HikariDataSource pool;
        final CountingDataSource counting;
        final Library library;

        Client(String url, Function<DataSource, Library> factory) {
            this.pool = pool(url, POOL);
            this.counting = new CountingDataSource(pool);
            this.library = factory.apply(counting.dataSource());
        }

        @Override
        public void close() {
            library.close();
            pool.close();
        }
    }

    /**
     * J1, one run ({@code run} names its locks): cycles/s, statements per cycle, and the CPU µs
     * per cycle of this JVM (the client, and the bench's own loop) and of the database's processes.
     */
    private double[] uncontended(Client client, int threads, String run, Supplier<Duration> serverCpu)
            throws Exception {
        Library library = client.library;
        AtomicLong cycles = new AtomicLong();
        long before = client.counting.statements();
        long clientBefore = CLIENT_CPU.getProcessCpuTime();
        Duration databaseBefore = serverCpu.get();
        BenchThreads.run(threads, seconds, t -> {
            Lock lock = library.lock("j1:" + run + ":" + t);
            return () -> {
                if (library.waits()) {
                    lock.lock();
                } else if (!lock.tryLock()) {
                    throw new IllegalStateException("an uncontended ShedLock lock was busy");
                }
                lock.unlock();
                cycles.incrementAndGet();
            };
        });
        double perCycle = Math.max(1, cycles.get());
        double clientMicros = (CLIENT_CPU.getProcessCpuTime() - clientBefore) / 1e3 / perCycle;
        double databaseMicros = serverCpu.get().minus(databaseBefore).toNanos() / 1e3 / perCycle;
        return new double[] {cycles.get() / (double) seconds, (client.counting.statements() - before) / perCycle,
            clientMicros, databaseMicros};
    }

    /** J2, one run ({@code run} names its lock): 4 clients × 2 threads on one lock, acquisitions/s. */
    private double contended(String url, Function<DataSource, Library> factory, int run) throws Exception {
        List<HikariDataSource> pools = new ArrayList<>();
        List<Library> clients = new ArrayList<>();
        try {
            for (int c = 0; c < 4; c++) {
                HikariDataSource pool = pool(url, 4);
                pools.add(pool);
                clients.add(factory.apply(pool));
            }
            AtomicLong acquisitions = new AtomicLong();
            String name = "j2:" + run;
            BenchThreads.run(8, seconds, t -> {
                Lock lock = clients.get(t % 4).lock(name);
                return () -> {
                    lock.lock();
                    lock.unlock();
                    acquisitions.incrementAndGet();
                };
            });
            return acquisitions.get() / (double) seconds;
        } finally {
            clients.forEach(Library::close);
            pools.forEach(HikariDataSource::close);
        }
    }

    /** J3: p50 and p90, in ms, of release-to-acquire across two clients, waiter already waiting. */
    private double[] handOff(String url, Function<DataSource, Library> factory) throws Exception {
        try (HikariDataSource poolA = pool(url, 4); HikariDataSource poolB = pool(url, 4);
                Library a = factory.apply(poolA); Library b = factory.apply(poolB)) {
            double[] latencies = BenchThreads.handOffs(handOffs, i -> (i % 2 == 0 ? a : b).lock("j3"),
                    i -> (i % 2 == 0 ? b : a).lock("j3"));
            Arrays.sort(latencies);
            return new double[] {latencies[latencies.length / 2], latencies[(int) (latencies.length * 0.9)]};
        }
    }

    static {
        // Keep the servers' and the libraries' logs out of the report.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
}
