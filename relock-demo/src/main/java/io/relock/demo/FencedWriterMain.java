package io.relock.demo;

import io.relock.FencedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;

/**
 * The other process of scenario 2b, run in a child JVM: a service instance that takes the
 * order's fenced lock, reads the order, and writes late.
 *
 * <p>Arguments: {@code <key-prefix> <lock-name> <watchdog-ms> <jdbc-url> <jdbc-user> <orders-table>
 * <account-table> <order-id> <amount>}; the Redis URI and the database password come on the
 * first two lines of stdin, so that no password shows in the process list.
 *
 * <p>Prints {@code READY <token> <status>} once it holds the lock and has read the order in its
 * transaction. On {@code write} it marks the order paid with its token
 * ({@code … WHERE id = ? AND fence_token < ?}), credits the account only if that updated the
 * row, commits, and prints {@code WRITE <rows updated>}; then it unlocks and prints
 * {@code UNLOCK ok} or {@code UNLOCK failed <why>}, and exits.
 */
public final class FencedWriterMain {

    private FencedWriterMain() {}

    /**
     * Runs the child.
     *
     * @param args see the class documentation
     * @throws Exception on any failure; the parent sees it in the child's output
     */
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String redisUri = in.readLine();
        String password = emptyToNull(in.readLine());
        String keyPrefix = args[0];
        String lockName = args[1];
        Duration watchdog = Duration.ofMillis(Long.parseLong(args[2]));
        String jdbcUrl = args[3];
        String user = emptyToNull(args[4]);
        String orders = args[5];
        String account = args[6];
        String orderId = args[7];
        long amount = Long.parseLong(args[8]);

        RelockConfig config = RelockConfig.builder()
                .singleServer(redisUri)
                .keyPrefix(keyPrefix)
                .watchdogTimeout(watchdog)
                .build();
        try (Relock relock = Relock.create(config);
                Connection db = DriverManager.getConnection(jdbcUrl, user, password)) {
            db.setAutoCommit(false);
            db.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            FencedLock lock = relock.getFencedLock(lockName);
            long token = lock.lockAndGetToken();
            String status;
            String accountId;
            String select = "SELECT status, account_id FROM " + orders + " WHERE id = ?";
            try (PreparedStatement read = db.prepareStatement(select)) {
                read.setString(1, orderId);
                try (ResultSet row = read.executeQuery()) {
                    row.next();
                    status = row.getString(1);
                    accountId = row.getString(2);
                }
            }
            say("READY " + token + " " + status);
            if (!"write".equals(in.readLine())) {
                return;
            }
            // The late write: the token decides, not this process's belief that it holds the lock.
            int rows;
            try (PreparedStatement markPaid = db.prepareStatement("UPDATE " + orders
                    + " SET status = 'PAID', fence_token = ? WHERE id = ? AND fence_token < ?")) {
                markPaid.setLong(1, token);
                markPaid.setString(2, orderId);
                markPaid.setLong(3, token);
                rows = markPaid.executeUpdate();
            }
            if (rows == 1) {
                try (PreparedStatement credit = db.prepareStatement("UPDATE " + account
                        + " SET balance = balance + ? WHERE id = ?")) {
                    credit.setLong(1, amount);
                    credit.setString(2, accountId);
                    credit.executeUpdate();
                }
                db.commit();
            } else {
                db.rollback();
            }
            say("WRITE " + rows);
            try {
                lock.unlock();
                say("UNLOCK ok");
            } catch (IllegalMonitorStateException e) {
                say("UNLOCK failed " + e.getMessage());
            }
        }
    }

    /** The driver's default (no user, no password) is asked for with null, not with an empty string. */
    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
