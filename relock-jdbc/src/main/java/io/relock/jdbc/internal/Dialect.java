package io.relock.jdbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * One database's statements on the lease table: each operation is one statement where the
 * database allows it, always judged by the database's clock, never the client's. Every method
 * runs on a connection in autocommit, so each statement is its own transaction.
 */
public abstract class Dialect {

    /** What an acquire found: acquired with its token, or busy with the holder and its lease left. */
    public record Acquired(boolean acquired, long token, String holder, long ttlMillis) {}

    /** A held lock's row: its owner, hold count, token and lease left (ms, at least 1). */
    public record Row(String owner, int holds, long token, long ttlMillis) {}

    final String table;
    /** Each statement's query timeout: the client's command timeout, in whole seconds (JDBC's unit). */
    private volatile int queryTimeoutSeconds;

    Dialect(String table) {
        this.table = table;
    }

    /** Sets every later statement's query timeout. */
    void queryTimeout(int seconds) {
        this.queryTimeoutSeconds = seconds;
    }

    /** A statement of this client, with its query timeout. */
    final PreparedStatement prepare(Connection c, String sql) throws SQLException {
        return prepare(c, sql, java.sql.Statement.NO_GENERATED_KEYS);
    }

    /** A statement of this client, with its query timeout, that returns generated keys or not. */
    final PreparedStatement prepare(Connection c, String sql, int generatedKeys) throws SQLException {
        PreparedStatement statement = c.prepareStatement(sql, generatedKeys);
        statement.setQueryTimeout(queryTimeoutSeconds);
        return statement;
    }

    /** The database's name, for messages. */
    public abstract String product();

    /** The DDL resource of this database, with {@code {table}} in it. */
    abstract String schemaResource();

    /**
     * Takes the lock for {@code owner} with a lease of {@code leaseMillis}: when it is free or its
     * lease ran out, or when {@code owner} holds it and {@code reentrant}; a re-entry adds a hold
     * when {@code countReentry}, else it starts a new hold (a hold the client forgot).
     */
    public abstract Acquired acquire(Connection c, String name, String owner, long leaseMillis, boolean reentrant,
            boolean countReentry) throws SQLException;

    /** Ends one hold of {@code owner}: null if it holds nothing, 0 if it still holds, 1 if the lock is free now. */
    public abstract Long release(Connection c, String name, String owner, int holdsBefore) throws SQLException;

    /**
     * Undoes an acquire whose answer was lost, only if it took effect: {@code owner}'s count is then
     * exactly {@code countBefore} + 1, and goes back to {@code countBefore} (0 frees the lock). 1 if
     * undone, 0 if there was nothing to undo; running it again changes nothing more.
     */
    public abstract long rollback(Connection c, String name, String owner, int countBefore) throws SQLException;

    /**
     * Keeps {@code owner}'s last hold for {@code keepMillis} more, and the lock with it, instead of
     * releasing it (a release with a minimum hold): 1 if kept, 0 if it holds no single hold.
     */
    public abstract long keep(Connection c, String name, String owner, long keepMillis) throws SQLException;

    /** Frees the lock whoever holds it: 1 if it was held, else 0. */
    public abstract long forceRelease(Connection c, String name) throws SQLException;

    /** A renewal's answer for a hold: renewed. */
    public static final long RENEWED = 1;
    /** ... gone (expired, released, taken by another). */
    public static final long GONE = 0;
    /** ... gone because a force-unlock removed it (the row's {@code forced_owner}). */
    public static final long FORCED = 2;

    /**
     * Extends the leases of the holds {@code names[i]} of {@code owners[i]} that are still live:
     * for each, {@link #RENEWED}, {@link #GONE} or {@link #FORCED}. The holds that were not
     * renewed cost a second statement, to tell the last two apart.
     */
    public abstract long[] renew(Connection c, String[] names, String[] owners, long leaseMillis) throws SQLException;

    /** Deletes the rows of locks free for longer than {@code retentionMillis}; how many. */
    public abstract int sweep(Connection c, long retentionMillis) throws SQLException;

    /** The live holder's row, or null when the lock is free. */
    public abstract Row read(Connection c, String name) throws SQLException;

    /**
     * Whether {@code owner} holds the lock by the database's clock, asked on a connection in the
     * caller's transaction: the row stays share-locked until that transaction ends, so no other
     * client's acquire, renewal or force-unlock changes it before the commit.
     */
    public final boolean holdsInTransaction(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement s = prepare(c, sql(holdsForShare()))) {
            s.setString(1, name);
            s.setString(2, owner);
            try (java.sql.ResultSet r = s.executeQuery()) {
                return r.next();
            }
        }
    }

    /** The locking read of {@link #holdsInTransaction}, {@code %1$s} the table. */
    abstract String holdsForShare();

    /** The table's name. */
    public final String table() {
        return table;
    }

    /** The DDL that creates the table. */
    public final String ddl() {
        return schema(schemaResource(), table);
    }

    /** Fails with the database's error unless the table is there with Relock's columns. */
    public final void check(Connection c) throws SQLException {
        try (PreparedStatement statement = c.prepareStatement(
                "SELECT " + columns() + " FROM " + table + " WHERE 1 = 0")) {
            // Only the columns count: the query failing is the answer, an empty result the success.
            statement.executeQuery().close();
        }
    }

    /** The columns the statements use. */
    String columns() {
        return "name, owner, holds, token, expires_at, forced_owner";
    }

    /** The DDL of {@code resource} for a table named {@code table}. */
    static String schema(String resource, String table) {
        try (InputStream in = Dialect.class.getResourceAsStream("/io/relock/jdbc/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("resource io/relock/jdbc/" + resource + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("{table}", table);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The statement's text for this table: {@code %1$s} names it. */
    final String sql(String template) {
        return String.format(template, table);
    }
}
