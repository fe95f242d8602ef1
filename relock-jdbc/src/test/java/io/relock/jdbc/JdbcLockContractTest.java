package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.LeaderElection;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.LockForceUnlockedException;
import io.relock.LockInfo;
import io.relock.LockLostEvent;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lock contract on each database: two clients on one table exclude each other, re-enter,
 * wait, lose a lease that runs out, keep one the watchdog renews, hand out growing tokens, and
 * refuse what the table cannot do. Every database is a real server of the testkit's.
 */
class JdbcLockContractTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private HikariDataSource dataSource(Database database) {
        HikariDataSource dataSource = database.freshDataSource();
        closing.add(dataSource);
        return dataSource;
    }

    private Relock client(HikariDataSource dataSource, Duration watchdog) {
        RelockConfig config = RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                .watchdogTimeout(watchdog).build();
        Relock relock = RelockJdbc.builder(dataSource).createTable(true).config(config).build();
        closing.add(relock);
        return relock;
    }

    private Relock client(HikariDataSource dataSource) {
        return client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void twoClientsExcludeEachOtherAndAReleaseLetsTheOtherIn(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        DistributedLock mine = a.getLock("order:42");
        DistributedLock theirs = b.getLock("order:42");

        assertThat(mine.tryLock()).isTrue();
        assertThat(theirs.tryLock()).isFalse();
        assertThat(theirs.isLocked()).isTrue();
        assertThat(theirs.isHeldByCurrentThread()).isFalse();
        assertThat(theirs.remainTimeToLive()).isBetween(1L, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT.toMillis());

        mine.unlock();
        assertThat(theirs.tryLock()).isTrue();
        assertThat(mine.isLocked()).isTrue();
        theirs.unlock();
        assertThat(mine.isLocked()).isFalse();
        assertThat(mine.remainTimeToLive()).isEqualTo(-2);
    }

    /**
     * Three clients of three threads each take one lock 40 times per thread; every holder checks
     * that it is alone inside. History checked: never two holders, and every acquisition counted.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void neverTwoHoldersUnderContentionAcrossClients(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        List<Relock> clients = List.of(client(dataSource), client(dataSource), client(dataSource));
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger acquisitions = new java.util.concurrent.atomic.AtomicInteger();
        List<CompletableFuture<Void>> threads = new ArrayList<>();
        for (int t = 0; t < 9; t++) {
            Relock relock = clients.get(t % 3);
            threads.add(CompletableFuture.runAsync(() -> {
                DistributedLock lock = relock.getLock("contended");
                for (int i = 0; i < 40; i++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.yield();
                        inside.decrementAndGet();
                        acquisitions.incrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                }
            }, java.util.concurrent.Executors.newSingleThreadExecutor()));
        }
        CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        assertThat(overlaps.get()).as("acquisitions that found another holder inside").isZero();
        assertThat(acquisitions.get()).isEqualTo(360);
        assertThat(clients.get(0).getLock("contended").isLocked()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aReentrantLockCountsItsHolds(Database database) {
        Relock relock = client(dataSource(database));
        DistributedLock lock = relock.getLock("reentered");
        lock.lock();
        lock.lock();
        assertThat(lock.getHoldCount()).isEqualTo(2);
        lock.unlock();
        assertThat(lock.isLocked()).isTrue();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aSimpleLockRefusesItsOwnHolderAgain(Database database) {
        Relock relock = client(dataSource(database));
        DistributedLock lock = relock.getSimpleLock("simple");
        lock.lock();
        assertThatThrownBy(lock::lock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("not reentrant");
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aWaiterGetsTheLockWhenTheHolderReleasesIt(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        DistributedLock held = a.getLock("handed");
        held.lock();
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            try {
                return b.getLock("handed").tryLock(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
        // The waiter cannot have it while the holder holds: its attempt is refused until the release.
        assertThat(waiter).isNotDone();
        held.unlock();
        // Far below the holder's 30 s lease: the release woke it (NOTIFY, or its backoff).
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aLeaseThatRunsOutFreesTheLockByTheDatabasesClock(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        assertThat(a.getLock("leased").tryLock(0, 300, TimeUnit.MILLISECONDS)).isTrue();
        DistributedLock theirs = b.getLock("leased");
        assertThat(theirs.tryLock()).isFalse();
        assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
        theirs.unlock();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theWatchdogKeepsALockPastItsTimeout(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource, Duration.ofMillis(600));
        Relock b = client(dataSource, Duration.ofMillis(600));
        DistributedLock mine = a.getLock("watched");
        mine.lock();
        // Three watchdog timeouts: without renewals the lease would be gone twice over.
        assertThat(b.getLock("watched").tryLock(1800, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(mine.isHeldByCurrentThread()).isTrue();
        mine.unlock();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void fencingTokensGrowAcrossReleasesExpiriesAndClients(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        FencedLock mine = a.getFencedLock("fenced");
        FencedLock theirs = b.getFencedLock("fenced");
        long first = mine.lockAndGetToken();
        assertThat(mine.getToken()).isEqualTo(first);
        mine.lock();
        assertThat(mine.getToken()).as("a re-entry keeps the token").isEqualTo(first);
        mine.unlock();
        mine.unlock();
        assertThat(mine.getToken()).as("no holder, no token").isNull();
        long second = theirs.lockAndGetToken();
        theirs.unlock();
        Long third = mine.tryLockAndGetToken(0, 200, TimeUnit.MILLISECONDS);
        assertThat(third).isNotNull();
        Long fourth = theirs.tryLockAndGetToken(10, 30, TimeUnit.SECONDS);
        assertThat(fourth).as("taken after the lease ran out").isNotNull();
        assertThat(List.of(first, second, third, fourth)).isSorted().doesNotHaveDuplicates();
        theirs.unlock();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aForceUnlockFreesTheLockAndTheHolderHearsItsLoss(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource, Duration.ofMillis(600));
        Relock b = client(dataSource, Duration.ofMillis(600));
        BlockingQueue<LockLostEvent> lost = new LinkedBlockingQueue<>();
        a.addLockListener(lost::add);
        DistributedLock mine = a.getLock("forced");
        mine.lock();
        LockInfo info = b.getLockInfo("forced");
        assertThat(info.isLocked()).isTrue();
        assertThat(info.holders()).containsOnlyKeys(a.clientId() + ":" + Thread.currentThread().getId());
        assertThat(b.forceUnlock("forced")).isTrue();
        assertThat(b.forceUnlock("forced")).isFalse();
        LockLostEvent event = lost.poll(10, TimeUnit.SECONDS);
        assertThat(event).isNotNull();
        assertThat(event.lockName()).isEqualTo("forced");
        assertThat(event.cause()).as("told why, as on Redis").isInstanceOf(LockForceUnlockedException.class);
        assertThat(b.getLock("forced").tryLock()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anUncontendedCycleIsTwoStatementsWithTheTokenInTheAcquire(Database database) throws Exception {
        CountingDataSource counting = new CountingDataSource(dataSource(database));
        // A watchdog tick (renewals, the sweep) every 200 s: none while this counts.
        Relock a = RelockJdbc.builder(counting.dataSource()).createTable(true).config(RelockConfig.builder()
                .singleServer(RelockJdbc.PLACEHOLDER_SERVER).watchdogTimeout(Duration.ofMinutes(10)).build()).build();
        closing.add(a);
        DistributedLock lock = a.getLock("counted");
        FencedLock fenced = a.getFencedLock("counted-fenced");
        // The first cycle makes the rows; the count is of cycles on rows that are there, as in use.
        lock.lock();
        lock.unlock();
        fenced.lockAndGetToken();
        fenced.unlock();

        int before = counting.executed().size();
        for (int i = 0; i < 20; i++) {
            lock.lock();
            lock.unlock();
        }
        assertThat(counting.executed().subList(before, counting.executed().size()))
                .as("20 cycles: one acquire and one release each").hasSize(40);

        before = counting.executed().size();
        long previous = 0;
        for (int i = 0; i < 10; i++) {
            long token = fenced.lockAndGetToken();
            assertThat(token).as("the token comes with the acquire, and grows").isGreaterThan(previous);
            previous = token;
            fenced.unlock();
        }
        assertThat(counting.executed().subList(before, counting.executed().size())).hasSize(20);
    }

    @Test
    void onMariaDbEachConnectionPreparesAStatementOnceAndAgainWhenItForgotIt() throws Exception {
        // One connection, so that every statement below runs on the one whose state is checked.
        HikariDataSource pool = Database.dataSource(Database.MARIADB.newDatabaseUrl(), 1);
        closing.add(pool);
        CountingDataSource counting = new CountingDataSource(pool);
        Relock a = RelockJdbc.builder(counting.dataSource()).createTable(true).config(RelockConfig.builder()
                .singleServer(RelockJdbc.PLACEHOLDER_SERVER).watchdogTimeout(Duration.ofMinutes(10)).build()).build();
        closing.add(a);
        DistributedLock lock = a.getLock("prepared");

        lock.lock();
        lock.unlock();
        List<String> prepared = counting.executed().stream().map(CountingDataSource.Executed::sql)
                .filter(sql -> sql.startsWith("PREPARE ")).map(sql -> sql.split(" ")[1]).toList();
        assertThat(prepared).as("the connection's first acquire and release prepare them").hasSize(2)
                .allMatch(name -> name.startsWith("relock_"));

        int before = counting.executed().size();
        lock.lock();
        lock.unlock();
        assertThat(sqlSince(counting, before)).as("from then on each is one EXECUTE of the prepared statement")
                .containsExactly("EXECUTE " + prepared.get(0), "EXECUTE " + prepared.get(1));

        // What a connection reset does to the session's prepared statements.
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            for (String name : prepared) {
                s.execute("DEALLOCATE PREPARE " + name);
            }
        }
        before = counting.executed().size();
        lock.lock();
        lock.unlock();
        assertThat(sqlSince(counting, before)).as("each refused, prepared again and run").containsExactly(
                "EXECUTE " + prepared.get(0), "PREPARE " + prepared.get(0), "EXECUTE " + prepared.get(0),
                "EXECUTE " + prepared.get(1), "PREPARE " + prepared.get(1), "EXECUTE " + prepared.get(1));
        assertThat(lock.isLocked()).as("released").isFalse();
    }

    /** The statements run since the {@code from}-th, each cut to its first two words. */
    private static List<String> sqlSince(CountingDataSource counting, int from) {
        List<CountingDataSource.Executed> executed = counting.executed();
        return executed.subList(from, executed.size()).stream()
                .map(e -> String.join(" ", java.util.Arrays.asList(e.sql().split(" ")).subList(0, 2))).toList();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theWatchdogRenewsAllOfAClientsLeasesInOneStatementPerTick(Database database) throws Exception {
        CountingDataSource counting = new CountingDataSource(dataSource(database));
        Relock a = RelockJdbc.builder(counting.dataSource()).createTable(true).config(RelockConfig.builder()
                .singleServer(RelockJdbc.PLACEHOLDER_SERVER).watchdogTimeout(Duration.ofMillis(600)).build()).build();
        closing.add(a);
        List<DistributedLock> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            DistributedLock lock = a.getLock("renewed:" + i);
            lock.lock();
            held.add(lock);
        }
        int before = counting.executed().size();
        Eventually.await(BOUND, "three renewals", () -> renewals(counting, before).size() >= 3);

        for (CountingDataSource.Executed renewal : renewals(counting, before)) {
            assertThat(renewal.values()).as("one statement renews all five: %s", renewal)
                    .filteredOn(value -> String.valueOf(value).startsWith("renewed:"))
                    .containsExactlyInAnyOrder("renewed:0", "renewed:1", "renewed:2", "renewed:3", "renewed:4");
        }
        assertThat(counting.executed().subList(before, counting.executed().size()))
                .as("nothing but renewals and sweeps while the five are held")
                .allMatch(e -> isRenewal(e) || isSweep(e));
        for (DistributedLock lock : held) {
            lock.unlock();
        }
    }

    private static List<CountingDataSource.Executed> renewals(CountingDataSource counting, int from) {
        List<CountingDataSource.Executed> executed = counting.executed();
        return executed.subList(from, executed.size()).stream().filter(JdbcLockContractTest::isRenewal).toList();
    }

    /** A sweep's DELETE, or on MariaDB its EXECUTE or PREPARE. */
    private static boolean isSweep(CountingDataSource.Executed executed) {
        return executed.sql().startsWith("DELETE") || executed.sql().contains(" relock_sweep_");
    }

    private static boolean isRenewal(CountingDataSource.Executed executed) {
        return executed.sql().startsWith("UPDATE") && executed.sql().contains("SET expires_at =");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aMinimumHoldKeepsTheLockAfterAnEarlyRelease(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        DistributedLock mine = a.getLock("kept");
        mine.lock();
        mine.unlock(Duration.ofSeconds(30));
        assertThat(mine.isHeldByCurrentThread()).as("the row still names this owner until the minimum is over").isTrue();
        assertThat(b.getLock("kept").tryLock()).isFalse();
        assertThat(b.getLock("kept").remainTimeToLive()).isGreaterThan(20_000);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void oneLeaderAtATimeAndTheNextOneWhenItCloses(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock a = client(dataSource);
        Relock b = client(dataSource);
        BlockingQueue<Leadership> electedA = new LinkedBlockingQueue<>();
        BlockingQueue<Leadership> electedB = new LinkedBlockingQueue<>();
        LeaderElection first = a.getLeaderElection("billing");
        LeaderElection second = b.getLeaderElection("billing");
        first.start(listener(electedA));
        Leadership term = electedA.poll(10, TimeUnit.SECONDS);
        assertThat(term).isNotNull();
        second.start(listener(electedB));
        assertThat(second.isLeader()).isFalse();
        assertThat(second.leader()).hasValueSatisfying(leader -> assertThat(leader.term()).isEqualTo(term.term()));
        first.close();
        Leadership next = electedB.poll(10, TimeUnit.SECONDS);
        assertThat(next).isNotNull();
        assertThat(next.term()).isGreaterThan(term.term());
        second.close();
    }

    private static LeadershipListener listener(BlockingQueue<Leadership> elected) {
        return new LeadershipListener() {
            @Override
            public void onElected(Leadership leadership) {
                elected.add(leadership);
            }

            @Override
            public void onRevoked(Leadership leadership) {
                // Only elections are counted here.
            }
        };
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void whatTheTableCannotDoIsRefusedAtCreation(Database database) {
        Relock relock = client(dataSource(database));
        assertThatThrownBy(() -> relock.getFairLock("fair")).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("fair locks");
        assertThatThrownBy(() -> relock.getReadWriteLock("rw")).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("read-write locks");
        String tooLong = "x".repeat(256);
        assertThatThrownBy(() -> relock.getLock(tooLong)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("256 characters").hasMessageContaining("255");
        assertThatThrownBy(() -> relock.getLock(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> relock.getLock("nul\0")).isInstanceOf(IllegalArgumentException.class);
        DistributedLock longest = relock.getLock("é".repeat(255));
        assertThat(longest.tryLock()).isTrue();
        longest.unlock();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aMissingTableIsAnErrorThatNamesTheDdl(Database database) {
        HikariDataSource dataSource = dataSource(database);
        assertThatThrownBy(() -> RelockJdbc.builder(dataSource).table("no_such_table").build())
                .isInstanceOf(io.relock.RelockException.class)
                .hasMessageContaining("no_such_table").hasMessageContaining("RelockJdbc.ddl")
                .hasMessageContaining("createTable(true)");
        Eventually.await(BOUND, "the failed start returned its connection", () ->
                dataSource.getHikariPoolMXBean().getActiveConnections() == 0);
    }
}
