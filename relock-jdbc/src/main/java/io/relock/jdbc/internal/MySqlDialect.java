package io.relock.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * MySQL 8+ and MariaDB 10.11+. Times are UTC by the database's clock ({@code UTC_TIMESTAMP(6)})
 * in {@code DATETIME(6)}, so neither the session's time zone nor DST moves a lease. There is no
 * {@code RETURNING} on an upsert, so an acquire answers through {@code LAST_INSERT_ID(expr)},
 * which the server sends back in the statement's OK packet and the driver hands over as the
 * generated key: one round trip. Where a driver gives no key, a read of the row on the same
 * connection answers instead. A release is one statement when the client's count is right. There
 * is no notification either: waiters poll with capped backoff (see {@code JdbcClient}).
 */
final class MySqlDialect extends Dialect {

    private static final String NOW = "UTC_TIMESTAMP(6)";
    private static final String MINE = "owner = VALUES(owner) AND expires_at > " + NOW + " AND ?";

    /**
     * Added to the lease left (ms) in the answer of an acquire that found the lock busy; tokens,
     * microseconds since the epoch when a row is made, stay far below it for millennia.
     */
    private static final long BUSY = 1L << 62;
    /** Added to a busy answer when the owner asking is the holder (a non-reentrant lock held twice). */
    private static final long BUSY_BY_ASKER = 1L << 61;

    /**
     * The columns are assigned left to right, each seeing the ones before it: the token, the
     * count and the expiry are decided while {@code owner} is still the old one. The token's
     * assignment also sets the statement's answer: the new token when taken, else {@link #BUSY}
     * plus the lease left. A busy row is set to what it was, so only a taken lock changes it.
     */
    private static final String ACQUIRE = "INSERT INTO %1$s (name, owner, holds, token, expires_at)"
            + " VALUES (?, ?, 1, LAST_INSERT_ID(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', " + NOW + "))"
            + " + 0 * (@relock_got := 1), " + NOW + " + INTERVAL ? * 1000 MICROSECOND)"
            + " ON DUPLICATE KEY UPDATE"
            + " token = IF((@relock_got := (owner IS NULL OR expires_at <= " + NOW + " OR (owner = VALUES(owner) AND ?))),"
            + " LAST_INSERT_ID(IF(" + MINE + ", token, GREATEST(token + 1, VALUES(token)))),"
            + " token + 0 * LAST_INSERT_ID(" + BUSY + " + IF(owner = VALUES(owner), " + BUSY_BY_ASKER + ", 0)"
            + " + GREATEST(1, CEIL(TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) / 1000)))),"
            + " holds = IF(@relock_got, IF(" + MINE + ", holds + 1, 1), holds),"
            + " expires_at = IF(@relock_got, IF(" + MINE + ", GREATEST(expires_at, VALUES(expires_at)),"
            + " VALUES(expires_at)), expires_at),"
            + " forced_owner = IF(@relock_got, NULLIF(forced_owner, VALUES(owner)), forced_owner),"
            + " owner = IF(@relock_got, VALUES(owner), owner)";

    private static final String ACQUIRED = "SELECT @relock_got, owner, token,"
            + " CEIL(TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) / 1000) FROM %1$s WHERE name = ?";

    private static final String RELEASE_LAST = "UPDATE %1$s SET holds = 0, owner = NULL, expires_at = " + NOW
            + " WHERE name = ? AND owner = ? AND holds = 1 AND expires_at > " + NOW;

    private static final String RELEASE_ONE = "UPDATE %1$s SET holds = holds - 1"
            + " WHERE name = ? AND owner = ? AND holds > 1 AND expires_at > " + NOW;

    /** {@code holds} is assigned first: the two after it read only the parameter. */
    private static final String ROLLBACK = "UPDATE %1$s SET holds = ?, owner = IF(? > 0, owner, NULL),"
            + " expires_at = IF(? > 0, expires_at, " + NOW + ")"
            + " WHERE name = ? AND owner = ? AND holds = ? + 1 AND expires_at > " + NOW;

    private static final String KEEP = "UPDATE %1$s SET expires_at = " + NOW + " + INTERVAL ? * 1000 MICROSECOND"
            + " WHERE name = ? AND owner = ? AND holds = 1 AND expires_at > " + NOW;

    /** {@code forced_owner} first: it reads the owner before the next assignment clears it. */
    private static final String FORCE_RELEASE = "UPDATE %1$s SET forced_owner = owner, holds = 0, owner = NULL,"
            + " expires_at = " + NOW
            + " WHERE name = ? AND owner IS NOT NULL AND expires_at > " + NOW;

    private static final String RENEW = "UPDATE %1$s SET expires_at = " + NOW + " + INTERVAL ? * 1000 MICROSECOND"
            + " WHERE (name, owner) IN (%2$s) AND expires_at > " + NOW;

    /** The holds a renewal asked for that are live (1), or that a force-unlock removed (2). */
    private static final String LIVE = "SELECT name, owner, 1 FROM %1$s WHERE (name, owner) IN (%2$s) AND expires_at > "
            + NOW + " UNION ALL SELECT name, forced_owner, 2 FROM %1$s WHERE (name, forced_owner) IN (%2$s)";

    private static final String SWEEP = "DELETE FROM %1$s WHERE expires_at < " + NOW
            + " - INTERVAL ? * 1000 MICROSECOND LIMIT 10000";

    private static final String READ = "SELECT owner, holds, token,"
            + " GREATEST(1, CEIL(TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) / 1000))"
            + " FROM %1$s WHERE name = ? AND owner IS NOT NULL AND expires_at > " + NOW;

    /** MariaDB's {@code ER_UNKNOWN_STMT_HANDLER}: this connection has not prepared the statement (yet, or since a reset). */
    private static final int UNKNOWN_STATEMENT = 1243;

    private final Fixed acquire;
    private final String acquired;
    private final Fixed releaseLast;
    private final Fixed releaseOne;
    private final Fixed rollback;
    private final Fixed keep;
    private final Fixed forceRelease;
    private final Fixed sweep;
    private final Fixed read;

    /**
     * The statements for {@code table}; on {@code mariaDb} each of fixed text runs as an
     * {@code EXECUTE} of a statement the connection prepared once (see {@link Fixed}).
     */
    MySqlDialect(String table, boolean mariaDb) {
        super(table);
        this.acquire = Fixed.of("acquire", sql(ACQUIRE), mariaDb);
        this.acquired = sql(ACQUIRED);
        this.releaseLast = Fixed.of("release_last", sql(RELEASE_LAST), mariaDb);
        this.releaseOne = Fixed.of("release_one", sql(RELEASE_ONE), mariaDb);
        this.rollback = Fixed.of("rollback", sql(ROLLBACK), mariaDb);
        this.keep = Fixed.of("keep", sql(KEEP), mariaDb);
        this.forceRelease = Fixed.of("force_release", sql(FORCE_RELEASE), mariaDb);
        this.sweep = Fixed.of("sweep", sql(SWEEP), mariaDb);
        this.read = Fixed.of("read", sql(READ), mariaDb);
    }

    /**
     * A statement of fixed text. The usual drivers prepare on the client, so the server parses
     * the whole text at every execution, and the acquire's upsert is long: its parse was most of
     * an uncontended cycle's database time. On MariaDB, whose {@code EXECUTE} takes the values
     * themselves after {@code USING}, it runs instead as {@code EXECUTE} of a statement the
     * connection prepared under a name made of the text's hash (two clients on other tables, or
     * another Relock version, use other names): still one round trip, and the server parses a
     * few words. A connection that has not prepared it yet answers {@link #UNKNOWN_STATEMENT}, and
     * is prepared then, so the first use of each pooled connection costs two statements more.
     * MySQL's {@code EXECUTE} takes only user variables, which would cost a statement: it runs
     * the text.
     *
     * @param text the statement's text
     * @param execute its {@code EXECUTE}, or null to run the text
     * @param prepare its {@code PREPARE}, or null
     */
    private record Fixed(String text, String execute, String prepare) {

        static Fixed of(String kind, String text, boolean prepared) {
            if (!prepared) {
                return new Fixed(text, null, null);
            }
            String name = "relock_" + kind + "_" + hash(text);
            int parameters = (int) text.chars().filter(ch -> ch == '?').count();
            String execute = "EXECUTE " + name + (parameters == 0 ? ""
                    : " USING " + String.join(", ", java.util.Collections.nCopies(parameters, "?")));
            return new Fixed(text, execute, "PREPARE " + name + " FROM '" + text.replace("'", "''") + "'");
        }

        private static String hash(String text) {
            try {
                byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
                        .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                return java.util.HexFormat.of().formatHex(digest, 0, 8);
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("every JVM has SHA-256", e);
            }
        }
    }

    /** What a statement does once its values are bound. */
    @FunctionalInterface
    private interface Use<T> {
        T use(PreparedStatement statement) throws SQLException;
    }

    private <T> T run(Connection c, Fixed statement, Use<T> use) throws SQLException {
        return run(c, statement, Statement.NO_GENERATED_KEYS, use);
    }

    /** Runs {@code statement}, preparing it on this connection first when the connection has not. */
    private <T> T run(Connection c, Fixed statement, int generatedKeys, Use<T> use) throws SQLException {
        if (statement.execute() == null) {
            return once(c, statement.text(), generatedKeys, use);
        }
        try {
            return once(c, statement.execute(), generatedKeys, use);
        } catch (SQLException e) {
            // Nothing ran: an unknown statement is refused before anything is read or changed.
            if (e.getErrorCode() != UNKNOWN_STATEMENT) {
                throw e;
            }
        }
        once(c, statement.prepare(), Statement.NO_GENERATED_KEYS, PreparedStatement::execute);
        return once(c, statement.execute(), generatedKeys, use);
    }

    private <T> T once(Connection c, String sql, int generatedKeys, Use<T> use) throws SQLException {
        try (PreparedStatement s = prepare(c, sql, generatedKeys)) {
            return use.use(s);
        }
    }

    @Override
    public String product() {
        return "MySQL/MariaDB";
    }

    @Override
    String schemaResource() {
        return "schema-mysql.sql";
    }

    /** {@code LOCK IN SHARE MODE}: MariaDB 10.11 has no {@code FOR SHARE}; a locking read sees the latest row. */
    @Override
    String holdsForShare() {
        return "SELECT 1 FROM %1$s WHERE name = ? AND owner = ? AND expires_at > " + NOW + " LOCK IN SHARE MODE";
    }

    @Override
    public Acquired acquire(Connection c, String name, String owner, long leaseMillis, boolean reentrant,
            boolean countReentry) throws SQLException {
        Acquired answered = run(c, acquire, Statement.RETURN_GENERATED_KEYS, s -> {
            s.setString(1, name);
            s.setString(2, owner);
            s.setLong(3, leaseMillis);
            s.setBoolean(4, reentrant);
            s.setBoolean(5, countReentry);
            s.setBoolean(6, countReentry);
            s.setBoolean(7, countReentry);
            s.executeUpdate();
            try (ResultSet keys = s.getGeneratedKeys()) {
                // A driver may list one key per affected row, counting up from the answer: the first is it.
                if (!keys.next()) {
                    return null;
                }
                long answer = keys.getLong(1);
                if (answer < BUSY) {
                    return new Acquired(true, answer, null, 0);
                }
                long ttl = answer & (BUSY_BY_ASKER - 1);
                return new Acquired(false, 0, (answer & BUSY_BY_ASKER) != 0 ? owner : null, ttl);
            }
        });
        if (answered != null) {
            return answered;
        }
        try (PreparedStatement s = prepare(c, acquired)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    // A sweep deleted the free row in between: nobody holds it, so try again soon.
                    return new Acquired(false, 0, null, 1);
                }
                if (r.getInt(1) == 1) {
                    return new Acquired(true, r.getLong(3), null, 0);
                }
                return new Acquired(false, 0, r.getString(2), Math.max(1, r.getLong(4)));
            }
        }
    }

    @Override
    public Long release(Connection c, String name, String owner, int holdsBefore) throws SQLException {
        // The client's count decides which statement goes first; the other only when it was wrong.
        if (holdsBefore > 1) {
            if (update(c, releaseOne, name, owner) > 0) {
                return 0L;
            }
            return update(c, releaseLast, name, owner) > 0 ? 1L : null;
        }
        if (update(c, releaseLast, name, owner) > 0) {
            return 1L;
        }
        return update(c, releaseOne, name, owner) > 0 ? 0L : null;
    }

    private int update(Connection c, Fixed statement, String name, String owner) throws SQLException {
        return run(c, statement, s -> {
            s.setString(1, name);
            s.setString(2, owner);
            return s.executeUpdate();
        });
    }

    @Override
    public long rollback(Connection c, String name, String owner, int countBefore) throws SQLException {
        return run(c, rollback, s -> {
            s.setInt(1, countBefore);
            s.setInt(2, countBefore);
            s.setInt(3, countBefore);
            s.setString(4, name);
            s.setString(5, owner);
            s.setInt(6, countBefore);
            return s.executeUpdate() > 0 ? 1L : 0L;
        });
    }

    @Override
    public long keep(Connection c, String name, String owner, long keepMillis) throws SQLException {
        return run(c, keep, s -> {
            s.setLong(1, keepMillis);
            s.setString(2, name);
            s.setString(3, owner);
            return s.executeUpdate() > 0 ? 1L : 0L;
        });
    }

    @Override
    public long forceRelease(Connection c, String name) throws SQLException {
        return run(c, forceRelease, s -> {
            s.setString(1, name);
            return s.executeUpdate() > 0 ? 1L : 0L;
        });
    }

    @Override
    public long[] renew(Connection c, String[] names, String[] owners, long leaseMillis) throws SQLException {
        String pairs = String.join(", ", java.util.Collections.nCopies(names.length, "(?, ?)"));
        int renewed;
        try (PreparedStatement s = prepare(c, String.format(RENEW, table, pairs))) {
            s.setLong(1, leaseMillis);
            bindPairs(s, 2, names, owners);
            renewed = s.executeUpdate();
        }
        long[] result = new long[names.length];
        if (renewed == names.length) {
            java.util.Arrays.fill(result, RENEWED);
            return result;
        }
        // Some were gone: which ones, and why, read on (those renewed just now are live).
        Map<String, Long> found = new HashMap<>();
        try (PreparedStatement s = prepare(c, String.format(LIVE, table, pairs))) {
            bindPairs(s, 1, names, owners);
            bindPairs(s, 1 + 2 * names.length, names, owners);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    found.merge(r.getString(1) + '\n' + r.getString(2), r.getLong(3), Math::min);
                }
            }
        }
        for (int i = 0; i < names.length; i++) {
            result[i] = found.getOrDefault(names[i] + '\n' + owners[i], GONE);
        }
        return result;
    }

    private static void bindPairs(PreparedStatement s, int first, String[] names, String[] owners) throws SQLException {
        for (int i = 0; i < names.length; i++) {
            s.setString(first + 2 * i, names[i]);
            s.setString(first + 2 * i + 1, owners[i]);
        }
    }

    @Override
    public int sweep(Connection c, long retentionMillis) throws SQLException {
        return run(c, sweep, s -> {
            s.setLong(1, retentionMillis);
            return s.executeUpdate();
        });
    }

    @Override
    public Row read(Connection c, String name) throws SQLException {
        return run(c, read, s -> {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? new Row(r.getString(1), r.getInt(2), r.getLong(3), r.getLong(4)) : null;
            }
        });
    }
}
