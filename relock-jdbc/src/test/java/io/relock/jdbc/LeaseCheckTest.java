package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lease checked in the data's own transaction: a holder whose lease ran out (as a paused
 * process's does) or whose lock was force-unlocked cannot commit, and the one that took the lock
 * after it can. History checked: the guarded table holds only the writes of transactions that
 * committed while their writer held the lock.
 */
class LeaseCheckTest {

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private Relock client(HikariDataSource dataSource) {
        Relock relock = RelockJdbc.builder(dataSource).createTable(true).build();
        closing.add(relock);
        return relock;
    }

    private HikariDataSource dataSource(Database database) throws SQLException {
        HikariDataSource dataSource = database.freshDataSource();
        closing.add(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE charges (order_id VARCHAR(40) NOT NULL, charged_by VARCHAR(40) NOT NULL)");
        }
        return dataSource;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aHolderWhoseLeaseRanOutCannotCommitAndTheNextHolderCan(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock frozen = client(dataSource);
        Relock next = client(dataSource);
        DistributedLock frozenLock = frozen.getLock("order:42");
        assertThat(frozenLock.tryLock(0, 300, TimeUnit.MILLISECONDS)).isTrue();
        try (Connection late = dataSource.getConnection()) {
            late.setAutoCommit(false);
            charge(late, "frozen");
            // The frozen holder's lease runs out while its transaction is open; the next one takes over.
            DistributedLock nextLock = next.getLock("order:42");
            assertThat(nextLock.tryLock(10, 30, TimeUnit.SECONDS)).isTrue();
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                charge(c, "next");
                LeaseCheck.verify(next, c, nextLock);
                c.commit();
            }
            assertThatThrownBy(() -> LeaseCheck.verify(frozen, late, frozenLock))
                    .isInstanceOf(LockLostException.class).hasMessageContaining("order:42");
            late.rollback();
        }
        assertThat(charges(dataSource)).containsExactly("next");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aForceUnlockedHolderCannotCommit(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock holder = client(dataSource);
        Relock operator = client(dataSource);
        DistributedLock lock = holder.getLock("order:7");
        lock.lock();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            charge(c, "holder");
            LeaseCheck.verify(holder, c, lock);
            c.commit();
            charge(c, "holder-again");
            assertThat(operator.forceUnlock("order:7")).isTrue();
            assertThatThrownBy(() -> LeaseCheck.verify(holder, c, "order:7", Thread.currentThread().getId()))
                    .isInstanceOf(LockLostException.class);
            c.rollback();
        }
        assertThat(charges(dataSource)).containsExactly("holder");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anotherOwnerOfTheSameClientDoesNotPass(Database database) throws Exception {
        HikariDataSource dataSource = dataSource(database);
        Relock relock = client(dataSource);
        DistributedLock lock = relock.getLock("order:9");
        lock.lock();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> LeaseCheck.verify(relock, c, "order:9", Relock.newOwnerId()))
                    .isInstanceOf(LockLostException.class);
            LeaseCheck.verify(relock, c, lock);
            c.rollback();
        }
        assertThat(LeaseCheck.appliesTo(relock)).isTrue();
        lock.unlock();
    }

    private static void charge(Connection c, String by) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO charges (order_id, charged_by) VALUES (?, ?)")) {
            s.setString(1, "42");
            s.setString(2, by);
            s.executeUpdate();
        }
    }

    private static List<String> charges(HikariDataSource dataSource) throws SQLException {
        List<String> by = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT charged_by FROM charges")) {
            while (r.next()) {
                by.add(r.getString(1));
            }
        }
        return by;
    }
}
