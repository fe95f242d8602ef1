package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.testkit.ChildJvm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A holder JVM paused (SIGSTOP) past its lease while its transaction is open: another client
 * takes the lock and commits; the paused one, resumed, cannot commit. History checked: the
 * guarded table holds only the write of the holder that had the lock when it committed.
 */
class PausedHolderTest {

    @ParameterizedTest
    @EnumSource(Database.class)
    void aPausedHoldersLateCommitIsRolledBack(Database database) throws Exception {
        String url = database.newDatabaseUrl();
        try (HikariDataSource dataSource = Database.dataSource(url, 4);
                Relock next = RelockJdbc.builder(dataSource).createTable(true).build()) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE charges (charged_by VARCHAR(20) NOT NULL)");
            }
            try (ChildJvm holder = ChildJvm.start(JdbcHolderMain.class, url, "order:42", "900")) {
                holder.awaitLine("HOLDING", Duration.ofSeconds(60));
                holder.pause();

                DistributedLock lock = next.getLock("order:42");
                assertThat(lock.tryLock(20, TimeUnit.SECONDS)).as("taken once the paused holder's lease ran out")
                        .isTrue();
                try (Connection c = dataSource.getConnection()) {
                    c.setAutoCommit(false);
                    try (PreparedStatement insert = c.prepareStatement("INSERT INTO charges (charged_by) VALUES ('next')")) {
                        insert.executeUpdate();
                    }
                    LeaseCheck.verify(next, c, lock);
                    c.commit();
                }

                holder.resume();
                holder.send("commit");
                assertThat(holder.awaitLine("ROLLED BACK", Duration.ofSeconds(30))).isNotNull();
                lock.unlock();
            }
            assertThat(charges(dataSource)).containsExactly("next");
        }
    }

    private static List<String> charges(HikariDataSource dataSource) throws Exception {
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
