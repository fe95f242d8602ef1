package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockConnectionException;
import io.relock.RelockException;
import io.relock.testkit.Eventually;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Faults on real servers, each driven at a chosen point: the database restarted or stopped
 * under a held lock, the pool exhausted, PostgreSQL's listening connection cut, names churned.
 * The histories checked: never two holders; nothing held that no client believes it holds; no
 * acknowledged hold lost while the database kept its rows.
 */
class JdbcFaultTest {

    private static final Duration BOUND = Duration.ofSeconds(15);

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        closing.add(resource);
        return resource;
    }

    private Relock client(HikariDataSource dataSource, Duration watchdog) {
        return closeLater(RelockJdbc.builder(dataSource).createTable(true)
                .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER).watchdogTimeout(watchdog)
                        .build())
                .build());
    }

    /** A separate server per test: these tests stop and restart it. */
    private static final class Server implements AutoCloseable {
        final Database database;
        final io.relock.testkit.PostgresServer postgres;
        final io.relock.testkit.MariaDbServer mariaDb;

        Server(Database database) {
            this.database = database;
            if (database == Database.POSTGRESQL) {
                postgres = io.relock.testkit.PostgresServer.launch();
                mariaDb = null;
            } else {
                database.mariaDb();
                postgres = null;
                mariaDb = io.relock.testkit.MariaDbServer.launch();
            }
        }

        String newDatabase() {
            return postgres != null ? postgres.createDatabase() : mariaDb.createDatabase();
        }

        void restart() {
            if (postgres != null) {
                postgres.restart();
            } else {
                mariaDb.restart();
            }
        }

        void stop() {
            if (postgres != null) {
                postgres.stopServer();
            } else {
                mariaDb.stopServer();
            }
        }

        void start() {
            if (postgres != null) {
                postgres.start();
            } else {
                mariaDb.start();
            }
        }

        @Override
        public void close() {
            if (postgres != null) {
                postgres.close();
            } else {
                mariaDb.close();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aHoldSurvivesARestartOfTheDatabaseAndNobodyElseGetsTheLock(Database database) throws Exception {
        Server server = closeLater(new Server(database));
        HikariDataSource dataSource = closeLater(Database.dataSource(server.newDatabase(), 8));
        Relock holder = client(dataSource, Duration.ofSeconds(3));
        Relock other = client(dataSource, Duration.ofSeconds(3));
        DistributedLock held = holder.getLock("through-restart");
        held.lock();

        server.restart();

        // The row was committed: the restarted database still says who holds the lock, and the
        // watchdog's next renewals (on new connections) keep it past its 3 s lease.
        Eventually.await(BOUND, "the other client reaches the restarted database", () -> {
            try {
                return !other.getLock("through-restart").tryLock();
            } catch (RelockException e) {
                return false;
            }
        });
        assertThat(other.getLock("through-restart").tryLock(4, TimeUnit.SECONDS))
                .as("held across more than a lease after the restart").isFalse();
        assertThat(held.isHeldByCurrentThread()).isTrue();
        held.unlock();
        assertThat(other.getLock("through-restart").tryLock()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aStoppedDatabaseIsAConnectionErrorAndLeavesNothingHeld(Database database) {
        Server server = closeLater(new Server(database));
        HikariDataSource dataSource = closeLater(Database.dataSource(server.newDatabase(), 4));
        Relock relock = client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        DistributedLock lock = relock.getLock("down");

        server.stop();
        long started = System.nanoTime();
        assertThatThrownBy(lock::tryLock).isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining("acquire lock 'down'");
        // The pool's connection timeout (2 s here), not a wait for the database to come back.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(8));
        assertThat(relock.heldLocks()).isEmpty();

        server.start();
        Eventually.await(BOUND, "the client reaches the database again", () -> {
            try {
                return lock.tryLock();
            } catch (RelockException e) {
                return false;
            }
        });
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anExhaustedPoolTimesOutClearlyAndLeaksNothing(Database database) throws Exception {
        // On PostgreSQL the client's listening connection keeps one connection of the pool for good.
        int size = database == Database.POSTGRESQL ? 2 : 1;
        HikariDataSource dataSource = closeLater(Database.dataSource(database.newDatabaseUrl(), size));
        Relock relock = client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        Eventually.await(BOUND, "the listening connection taken", () ->
                dataSource.getHikariPoolMXBean().getActiveConnections() == size - 1);
        DistributedLock lock = relock.getLock("starved");
        try (Connection taken = dataSource.getConnection()) {
            assertThat(taken.isValid(1)).isTrue();
            assertThatThrownBy(lock::tryLock).isInstanceOf(RelockException.class)
                    .hasMessageContaining("acquire lock 'starved'").hasMessageContaining("request timed out");
        }
        assertThat(relock.heldLocks()).isEmpty();
        assertThat(relock.getLockInfo("starved").isLocked()).isFalse();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        Eventually.await(BOUND, "every statement's connection back in the pool", () ->
                dataSource.getHikariPoolMXBean().getActiveConnections() == size - 1);
    }

    /**
     * lock() is not interruptible: a caller interrupted before it asks, whose statement must wait
     * for a connection, still gets the lock, with its interrupt flag kept, and no hold is left
     * that it does not know of. The pool is drained so that the statement waits, which is where a
     * pool gives up on an interrupted thread.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void anInterruptedCallerOfLockWaitsForAConnectionAndKeepsItsInterrupt(Database database) throws Exception {
        int size = database == Database.POSTGRESQL ? 2 : 1;
        HikariDataSource dataSource = closeLater(Database.dataSource(database.newDatabaseUrl(), size, 30_000));
        Relock relock = client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        Eventually.await(BOUND, "the listening connection taken", () ->
                dataSource.getHikariPoolMXBean().getActiveConnections() == size - 1);
        DistributedLock lock = relock.getLock("interrupted-caller");
        Connection taken = dataSource.getConnection();
        CompletableFuture<Boolean> caller = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                lock.lock();
                boolean kept = Thread.interrupted();
                lock.unlock();
                caller.complete(kept);
            } catch (Throwable e) {
                caller.completeExceptionally(e);
            }
        });
        thread.start();
        Eventually.await(BOUND, "the caller waiting for a connection", () ->
                dataSource.getHikariPoolMXBean().getThreadsAwaitingConnection() == 1);
        taken.close();
        assertThat(caller.get(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the interrupt flag kept").isTrue();
        assertThat(relock.getLockInfo("interrupted-caller").isLocked()).isFalse();
    }

    @Test
    void waitersStillWakeWhenTheListeningConnectionIsCut() throws Exception {
        HikariDataSource dataSource = closeLater(Database.POSTGRESQL.freshDataSource());
        Relock holder = client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        Relock waiter = client(dataSource, RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        DistributedLock held = holder.getLock("cut");
        held.lock();
        CountDownLatch asking = new CountDownLatch(1);
        CompletableFuture<Boolean> got = CompletableFuture.supplyAsync(() -> {
            asking.countDown();
            try {
                DistributedLock lock = waiter.getLock("cut");
                boolean acquired = lock.tryLock(20, TimeUnit.SECONDS);
                if (acquired) {
                    lock.unlock();
                }
                return acquired;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(asking.await(10, TimeUnit.SECONDS)).isTrue();

        // Every listening session of this database ends: both clients' notifications are lost
        // until they reconnect, and the release below may fall into that gap.
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet cut = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        + " WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()")) {
            assertThat(cut.next()).isTrue();
            assertThat(cut.getInt(1)).isEqualTo(2);
        }
        held.unlock();

        // Well inside the holder's 30 s lease: the re-check after the reconnect found it free.
        assertThat(got.get(10, TimeUnit.SECONDS)).isTrue();
        // The broken listening connections went back to the pool they came from: the pool must
        // have dropped them, or the next statements would get a dead connection.
        for (int i = 0; i < 20; i++) {
            DistributedLock next = (i % 2 == 0 ? holder : waiter).getLock("after-cut:" + i);
            assertThat(next.tryLock()).isTrue();
            next.unlock();
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void rowsOfChurnedNamesAreDeletedOnceFreeForTheRetention(Database database) throws Exception {
        HikariDataSource dataSource = closeLater(database.freshDataSource());
        Relock relock = closeLater(RelockJdbc.builder(dataSource).createTable(true)
                .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                        .watchdogTimeout(Duration.ofMillis(300)).build())
                .retention(Duration.ofSeconds(1)).build());
        for (int i = 0; i < 2000; i++) {
            DistributedLock lock = relock.getLock("churn:" + i);
            lock.lock();
            lock.unlock();
        }
        DistributedLock kept = relock.getLock("churn:held");
        kept.lock();
        Eventually.await(BOUND, "the free rows deleted, the held one kept", () -> rows(dataSource) == 1);
        assertThat(kept.isHeldByCurrentThread()).isTrue();
        kept.unlock();
    }

    private static int rows(HikariDataSource dataSource) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) FROM " + RelockJdbc.DEFAULT_TABLE)) {
            r.next();
            return r.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
