package io.relock;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.jdbc.CountingDataSource;
import io.relock.jdbc.Database;
import io.relock.jdbc.RelockJdbc;
import io.relock.testkit.Eventually;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Nested;

/**
 * The contract matrix, lock type × back end. Core runs its contract suite ({@link LockContractTest})
 * for every lock type on Redis (one server, Sentinel, Cluster); this runs the same suite, test for
 * test, for every type the lease table supports (reentrant, fenced, spin, simple) on PostgreSQL
 * and on MariaDB. The types it does not support (fair, read-write) are refused at creation, which
 * {@code JdbcLockContractTest} checks. Each test gets a new database of its own.
 */
class LockMatrixTest {

    @Nested
    class ReentrantOnPostgres extends OnDatabase {
        ReentrantOnPostgres() {
            super(LockType.REENTRANT, Database.POSTGRESQL);
        }
    }

    @Nested
    class FencedOnPostgres extends OnDatabase {
        FencedOnPostgres() {
            super(LockType.FENCED, Database.POSTGRESQL);
        }
    }

    @Nested
    class SpinOnPostgres extends OnDatabase {
        SpinOnPostgres() {
            super(LockType.SPIN, Database.POSTGRESQL);
        }
    }

    @Nested
    class SimpleOnPostgres extends OnDatabase {
        SimpleOnPostgres() {
            super(LockType.SIMPLE, Database.POSTGRESQL);
        }
    }

    @Nested
    class ReentrantOnMariaDb extends OnDatabase {
        ReentrantOnMariaDb() {
            super(LockType.REENTRANT, Database.MARIADB);
        }
    }

    @Nested
    class FencedOnMariaDb extends OnDatabase {
        FencedOnMariaDb() {
            super(LockType.FENCED, Database.MARIADB);
        }
    }

    @Nested
    class SpinOnMariaDb extends OnDatabase {
        SpinOnMariaDb() {
            super(LockType.SPIN, Database.MARIADB);
        }
    }

    @Nested
    class SimpleOnMariaDb extends OnDatabase {
        SimpleOnMariaDb() {
            super(LockType.SIMPLE, Database.MARIADB);
        }
    }

    /**
     * The suite on one lock type in one database. What the Redis suite reads off Redis, it reads
     * here off the statements and the clients: a client waits when an acquire of the lock is under
     * way and has asked the table since it began (a spin lock: twice), and no waiter is left when
     * no acquire of the lock is under way.
     */
    abstract static class OnDatabase extends LockTypeContractTest {

        private final LockType type;
        private final Database database;
        private HikariDataSource pool;
        private CountingDataSource counting;
        /** The acquires under way, by lock name: each with the statements naming the lock when it began. */
        private final Map<Object, Started> started = new ConcurrentHashMap<>();

        private record Started(String lockName, long statementsBefore) {}

        private final LockObserver acquires = new LockObserver() {
            @Override
            public Object onAcquireStart(String lockName, String lockType, long ownerId) {
                Object mark = new Object();
                started.put(mark, new Started(lockName, statementsNaming(lockName)));
                return mark;
            }

            @Override
            public void onAcquireEnd(AcquireEvent event, Object context) {
                started.remove(context);
            }
        };

        OnDatabase(LockType type, Database database) {
            super(type);
            this.type = type;
            this.database = database;
        }

        @Override
        protected Clients clients(Backend backend) {
            // Room for the suite's thousand callers of one client, which run their statements on
            // their own threads: they queue for a connection instead of failing after the usual 2 s.
            pool = Database.dataSource(database.newDatabaseUrl(), 32, 60_000);
            counting = new CountingDataSource(pool);
            return new Clients(watchdog -> {
                Relock relock = RelockJdbc.builder(counting.dataSource()).createTable(true)
                        .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                                .watchdogTimeout(watchdog).commandTimeout(Clients.COMMAND_TIMEOUT).build())
                        .build();
                relock.addObserver(acquires);
                return relock;
            }).closeAfter(pool);
        }

        @Override
        protected void awaitWaiting(String name) {
            int asked = type.waiting() == LockType.Waiting.RETRYING ? 2 : 1;
            Eventually.await(PROMPTLY, "an acquire of '" + name + "' under way that asked " + asked + " times",
                    () -> started.values().stream().anyMatch(s -> s.lockName().equals(name)
                            && statementsNaming(name) >= s.statementsBefore() + asked));
        }

        @Override
        protected long waitersLeft(String name) {
            return started.values().stream().filter(s -> s.lockName().equals(name)).count();
        }

        @Override
        protected long storedLocks() {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT COUNT(*) FROM " + RelockJdbc.DEFAULT_TABLE)) {
                r.next();
                return r.getLong(1);
            } catch (SQLException e) {
                throw new IllegalStateException("could not count the rows", e);
            }
        }

        /** Statements that named the lock, apart from the watchdog's renewals of all of a client's holds. */
        private long statementsNaming(String name) {
            return counting.executed().stream()
                    .filter(e -> !e.sql().contains("SET expires_at =") && e.values().contains(name)).count();
        }
    }
}
