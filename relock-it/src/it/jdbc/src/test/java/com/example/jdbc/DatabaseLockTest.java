package com.example.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

// tag::jdbc-imports[]
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.jdbc.LeaseCheck;
import io.relock.jdbc.RelockJdbc;
import java.sql.Connection;
import javax.sql.DataSource;
// end::jdbc-imports[]
import io.relock.LockLostException;
import io.relock.testkit.PostgresServer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * docs/databases.md's code, compiled from the same text (the tagged regions) and run on a
 * PostgreSQL server that relock-testkit starts.
 */
class DatabaseLockTest {

    private static PostgresServer postgres;
    private static DataSource dataSource;

    /** Whether another client saw order:42 locked while it was charged. */
    private final List<Boolean> lockedWhileCharging = new ArrayList<>();
    private Relock otherClient;

    @BeforeAll
    static void startPostgres() throws SQLException {
        postgres = PostgresServer.launch();
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setUrl(postgres.createDatabase());
        dataSource = pg;
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE charges (order_id INT NOT NULL)");
        }
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    void quickStart(DataSource dataSource) {
        // tag::jdbc-code[]
        try (Relock relock = RelockJdbc.builder(dataSource)     // your application's DataSource
                .createTable(true)                               // or create it with RelockJdbc.ddl(...)
                .build()) {
            DistributedLock lock = relock.getLock("order:42");
            lock.withLock(() -> chargeOrder(42));                // one thread in the whole fleet at a time
        }
        // end::jdbc-code[]
    }

    void chargeOrder(int orderId) {
        lockedWhileCharging.add(otherClient.getLock("order:" + orderId).isLocked());
    }

    void chargeInTransaction(Relock relock, DistributedLock lock, int orderId) throws SQLException {
        // tag::jdbc-lease-check[]
        lock.lock();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            insertCharge(c, orderId);                            // the guarded write
            LeaseCheck.verify(relock, c, lock);                  // still ours? else LockLostException
            c.commit();                                          // no other holder can come between
        } finally {
            lock.unlock();
        }
        // end::jdbc-lease-check[]
    }

    private static void insertCharge(Connection c, int orderId) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO charges (order_id) VALUES (" + orderId + ")");
        }
    }

    @Test
    void theQuickStartHoldsOrder42WhileItChargesAndReleasesItAfterwards() {
        try (Relock other = RelockJdbc.builder(dataSource).createTable(true).build()) {
            otherClient = other;

            quickStart(dataSource);

            assertThat(lockedWhileCharging).containsExactly(true);
            assertThat(other.getLock("order:42").isLocked()).isFalse();
        }
    }

    @Test
    void aChargeCommitsOnlyWhileItsLockIsHeld() throws SQLException {
        try (Relock relock = RelockJdbc.builder(dataSource).createTable(true).build();
                Relock operator = RelockJdbc.builder(dataSource).build()) {
            DistributedLock lock = relock.getLock("order:7");
            chargeInTransaction(relock, lock, 7);
            lock.lock();
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                insertCharge(c, 8);
                assertThat(operator.forceUnlock("order:7")).isTrue();
                assertThatThrownBy(() -> LeaseCheck.verify(relock, c, lock)).isInstanceOf(LockLostException.class);
                c.rollback();
            }
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT order_id FROM charges ORDER BY order_id")) {
                List<Integer> charged = new ArrayList<>();
                while (r.next()) {
                    charged.add(r.getInt(1));
                }
                assertThat(charged).containsExactly(7);
            }
        }
    }
}
