package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.jdbc.LeaseCheck;
import io.relock.jdbc.RelockJdbc;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Scenario 2c's holder: {@code <jdbc-url> <lock-name> <watchdog-ms>}. Takes the lock kept in
 * PostgreSQL, opens a transaction that inserts its charge, prints {@code HOLDING}; on
 * {@code commit} checks its lease in that transaction and prints {@code CHILD committed} or
 * {@code CHILD rolled back: ...}.
 */
public final class DatabaseHolderMain {

    private DatabaseHolderMain() {}

    public static void main(String[] args) throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(args[0]);
        RelockConfig config = RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                .watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2]))).releaseOnShutdown(false).build();
        try (Relock relock = RelockJdbc.builder(dataSource).config(config).build();
                Connection c = dataSource.getConnection()) {
            DistributedLock lock = relock.getLock(args[1]);
            lock.lock();
            c.setAutoCommit(false);
            DatabaseLease.charge(c, "paused child");
            System.out.println("HOLDING");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("commit")) {
                    try {
                        LeaseCheck.verify(relock, c, lock);
                        c.commit();
                        System.out.println("CHILD committed");
                    } catch (LockLostException e) {
                        c.rollback();
                        System.out.println("CHILD rolled back: " + e.getMessage());
                    }
                    System.out.flush();
                    return;
                }
            }
        }
    }
}
