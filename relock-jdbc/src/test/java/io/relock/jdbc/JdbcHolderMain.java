package io.relock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * A process holding a lock on a database: {@code <jdbc-url> <lock-name> <watchdog-ms>}. Takes
 * the lock, opens a transaction that writes a charge, prints {@code HOLDING}; on {@code commit}
 * checks the lease in that transaction and prints {@code COMMITTED} or {@code ROLLED BACK}.
 */
public final class JdbcHolderMain {

    private JdbcHolderMain() {}

    public static void main(String[] args) throws Exception {
        try (HikariDataSource dataSource = Database.dataSource(args[0], 4);
                Relock relock = RelockJdbc.builder(dataSource)
                        .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                                .watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2]))).build())
                        .build();
                Connection c = dataSource.getConnection()) {
            DistributedLock lock = relock.getLock(args[1]);
            lock.lock();
            c.setAutoCommit(false);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO charges (charged_by) VALUES ('paused')")) {
                insert.executeUpdate();
            }
            System.out.println("HOLDING");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("commit")) {
                    try {
                        LeaseCheck.verify(relock, c, lock);
                        c.commit();
                        System.out.println("COMMITTED");
                    } catch (LockLostException e) {
                        c.rollback();
                        System.out.println("ROLLED BACK");
                    }
                    System.out.flush();
                    return;
                }
            }
        }
    }
}
