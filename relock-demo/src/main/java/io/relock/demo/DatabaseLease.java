package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.jdbc.LeaseCheck;
import io.relock.jdbc.RelockJdbc;
import io.relock.testkit.ChildJvm;
import io.relock.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Scenario 2b again, with the lock kept in the same PostgreSQL as the data (relock-jdbc) and no
 * fencing column: the paused holder ({@link DatabaseHolderMain}, another JVM) has its
 * transaction open with its charge written when it is frozen (SIGSTOP); its lease runs out, this
 * JVM takes the lock and commits its charge, checking the lease in its transaction. Resumed, the
 * child checks its lease in its own transaction before the commit: gone, so it rolls back.
 */
final class DatabaseLease implements Scenario {

    static final String TITLE = "The same paused holder, with the lock in PostgreSQL: its late commit rolled back";

    private static final String LOCK = "recharge-db:order-1";
    private static final Duration CHILD_WATCHDOG = Duration.ofSeconds(1);
    private static final Duration PROMPTLY = Duration.ofSeconds(60);

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return "with the lock in the data's database, the lease is checked inside the committing transaction: a"
                + " holder paused past its lease cannot commit, and the application has no fencing code.";
    }

    @Override
    public void run(Report.Section section) throws Exception {
        try (PostgresServer postgres = PostgresServer.launch()) {
            String url = postgres.createDatabase();
            PGSimpleDataSource dataSource = new PGSimpleDataSource();
            dataSource.setUrl(url);
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE charges (order_id VARCHAR(20) NOT NULL, charged_by VARCHAR(20) NOT NULL)");
            }
            section.figure("PostgreSQL", "started for this scenario on port " + postgres.port()
                    + "; the lock table relock_lock and the table charges in one database");
            try (Relock relock = RelockJdbc.builder(dataSource).createTable(true).build();
                    ChildJvm child = ChildJvm.start(DatabaseHolderMain.class, url, LOCK,
                            Long.toString(CHILD_WATCHDOG.toMillis()))) {
                child.awaitLine("HOLDING", PROMPTLY);
                section.figure("child JVM (pid " + child.pid() + ")", "holds " + LOCK + " (lease "
                        + Report.human(CHILD_WATCHDOG) + ", watchdog-renewed); its transaction has inserted its"
                        + " charge, not committed");
                child.pause();
                section.note("child paused with SIGSTOP: its watchdog cannot renew the lease");
                long pausedAt = System.nanoTime();
                DistributedLock lock = relock.getLock(LOCK);
                boolean taken;
                try {
                    taken = lock.tryLock(10, TimeUnit.SECONDS);
                    if (taken) {
                        try (Connection c = dataSource.getConnection()) {
                            c.setAutoCommit(false);
                            charge(c, "this JVM");
                            LeaseCheck.verify(relock, c, lock);
                            c.commit();
                        } finally {
                            lock.unlock();
                        }
                    }
                } finally {
                    child.resume();
                }
                section.figure("this JVM", taken ? "took the lock " + Report.human(Duration.ofNanos(System.nanoTime()
                        - pausedAt)) + " after the pause, charged and committed with the lease checked in its"
                        + " transaction" : "did not get the lock within 10 s");
                child.send("commit");
                String childOutcome = child.awaitLine("CHILD", PROMPTLY).substring("CHILD ".length());
                section.note("child resumed; it still believes it holds the lock and tries to commit its charge");
                section.figure("child's commit", childOutcome);
                child.awaitExit(PROMPTLY);
                List<String> charges = charges(dataSource);
                section.figure("charges afterwards", charges + " (should be [this JVM])");
                boolean passed = taken && childOutcome.startsWith("rolled back") && charges.equals(List.of("this JVM"));
                section.verdict(passed, "the paused holder's late commit was rolled back by the lease check in its"
                        + " own transaction; charged once", "this JVM took the lock: " + taken + ", child: "
                        + childOutcome + ", charges " + charges);
            }
        }
    }

    static void charge(Connection c, String by) throws java.sql.SQLException {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO charges (order_id, charged_by) VALUES (?, ?)")) {
            insert.setString(1, "order-1");
            insert.setString(2, by);
            insert.executeUpdate();
        }
    }

    private static List<String> charges(PGSimpleDataSource dataSource) throws java.sql.SQLException {
        List<String> by = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT charged_by FROM charges ORDER BY charged_by")) {
            while (r.next()) {
                by.add(r.getString(1));
            }
        }
        return by;
    }
}
