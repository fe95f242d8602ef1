package io.relock.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * PostgreSQL 15+: every operation is one statement, but an acquire that finds the lock busy,
 * which sends a second to mark the row and read the holder. Expiry is judged by {@code clock_timestamp()}
 * (the time the row is looked at, not the transaction's start), and a release that frees a lock
 * announces it with {@code pg_notify} on the table's channel, the lock's name as payload,
 * delivered when the statement commits.
 */
final class PostgresDialect extends Dialect {

    /** Live: held, and its lease not over by the database's clock now. */
    private static final String MINE = "l.owner = excluded.owner AND l.expires_at > clock_timestamp() AND ?";

    /**
     * The upsert takes the lock when it is free, its lease is over, or (re-entry) its owner asks,
     * and answers with the token; no row means busy. Plain, not wrapped in a CTE: on the
     * uncontended path every plan node is paid at each cycle.
     */
    private static final String ACQUIRE = "INSERT INTO %1$s AS l (name, owner, holds, token, expires_at)"
            + " VALUES (?, ?, 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint,"
            + " clock_timestamp() + ? * interval '1 millisecond')"
            + " ON CONFLICT (name) DO UPDATE SET"
            + " holds = CASE WHEN " + MINE + " THEN l.holds + 1 ELSE 1 END,"
            + " token = CASE WHEN " + MINE + " THEN l.token ELSE GREATEST(l.token + 1, excluded.token) END,"
            + " expires_at = CASE WHEN " + MINE + " THEN GREATEST(l.expires_at, excluded.expires_at)"
            + " ELSE excluded.expires_at END,"
            + " owner = excluded.owner,"
            + " forced_owner = NULLIF(l.forced_owner, excluded.owner)"
            + " WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp() OR (l.owner = excluded.owner AND ?)"
            + " RETURNING l.token";

    /**
     * After a busy upsert: marks the row, since a waiter of some client may now be parked until
     * the holder's lease end, so releases until then announce themselves; and reads the holder
     * and its lease left as they are now. No row: the lock was freed in between.
     */
    private static final String MARK_WAITING = "UPDATE %1$s SET waiters_until = GREATEST(waiters_until,"
            + " expires_at + interval '1 second')"
            + " WHERE name = ? AND owner IS NOT NULL AND expires_at > clock_timestamp()"
            + " RETURNING owner, GREATEST(1, ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000))::bigint";

    /**
     * Announces a freed lock while a waiter may be parked, in the statement that freed it (sent
     * at commit): in the RETURNING list, where CASE evaluates it only for a freed row.
     */
    private static final String NOTIFY_FREED = " RETURNING holds, CASE WHEN holds = 0"
            + " AND waiters_until > clock_timestamp() THEN pg_notify(?, name)::text END";

    private static final String RELEASE = "UPDATE %1$s SET holds = holds - 1,"
            + " owner = CASE WHEN holds > 1 THEN owner END,"
            + " expires_at = CASE WHEN holds > 1 THEN expires_at ELSE clock_timestamp() END"
            + " WHERE name = ? AND owner = ? AND expires_at > clock_timestamp()" + NOTIFY_FREED;

    private static final String ROLLBACK = "UPDATE %1$s SET holds = ?, owner = CASE WHEN ? > 0 THEN owner END,"
            + " expires_at = CASE WHEN ? > 0 THEN expires_at ELSE clock_timestamp() END"
            + " WHERE name = ? AND owner = ? AND holds = ? + 1 AND expires_at > clock_timestamp()" + NOTIFY_FREED;

    private static final String FORCE_RELEASE = "UPDATE %1$s SET forced_owner = owner, holds = 0, owner = NULL,"
            + " expires_at = clock_timestamp()"
            + " WHERE name = ? AND owner IS NOT NULL AND expires_at > clock_timestamp()" + NOTIFY_FREED;

    /** Announced too: waiters parked until the old expiry ask again and learn the new one. */
    private static final String KEEP = "UPDATE %1$s SET expires_at = clock_timestamp() + ? * interval '1 millisecond'"
            + " WHERE name = ? AND owner = ? AND holds = 1 AND expires_at > clock_timestamp()"
            + " RETURNING 0, CASE WHEN waiters_until > clock_timestamp() THEN pg_notify(?, name)::text END";

    /** Which of the holds a renewal did not find were removed by a force-unlock. */
    private static final String FORCED_AMONG = "SELECT t.name, t.forced_owner FROM %1$s t"
            + " JOIN unnest(?::varchar[], ?::varchar[]) AS h(name, owner)"
            + " ON t.name = h.name AND t.forced_owner = h.owner";

    private static final String RENEW = "UPDATE %1$s t SET expires_at = clock_timestamp() + ? * interval '1 millisecond'"
            + " FROM unnest(?::varchar[], ?::varchar[]) AS h(name, owner)"
            + " WHERE t.name = h.name AND t.owner = h.owner AND t.expires_at > clock_timestamp()"
            + " RETURNING t.name, t.owner";

    private static final String SWEEP = "DELETE FROM %1$s WHERE expires_at < clock_timestamp() - ? * interval '1 millisecond'";

    private static final String READ = "SELECT owner, holds, token,"
            + " GREATEST(1, ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000))::bigint"
            + " FROM %1$s WHERE name = ? AND owner IS NOT NULL AND expires_at > clock_timestamp()";

    private final String acquire;
    private final String markWaiting;
    private final String release;
    private final String rollback;
    private final String forceRelease;
    private final String keep;
    private final String renew;
    private final String forcedAmong;
    private final String sweep;
    private final String read;
    /** The channel of this table's releases: the table's name, as LISTEN takes it quoted. */
    private final String channel;

    PostgresDialect(String table) {
        super(table);
        this.acquire = sql(ACQUIRE);
        this.markWaiting = sql(MARK_WAITING);
        this.release = sql(RELEASE);
        this.rollback = sql(ROLLBACK);
        this.forceRelease = sql(FORCE_RELEASE);
        this.keep = sql(KEEP);
        this.renew = sql(RENEW);
        this.forcedAmong = sql(FORCED_AMONG);
        this.sweep = sql(SWEEP);
        this.read = sql(READ);
        this.channel = channelOf(table);
    }

    /** The notification channel of {@code table}'s releases. */
    static String channelOf(String table) {
        String channel = "relock:" + table;
        // A channel is a name: 63 bytes at most (the table's name is ASCII, checked by the builder).
        return channel.length() <= 63 ? channel : "relock:" + Integer.toHexString(table.hashCode());
    }

    String channel() {
        return channel;
    }

    @Override
    public String product() {
        return "PostgreSQL";
    }

    @Override
    String columns() {
        return super.columns() + ", waiters_until";
    }

    @Override
    String schemaResource() {
        return "schema-postgresql.sql";
    }

    @Override
    String holdsForShare() {
        return "SELECT 1 FROM %1$s WHERE name = ? AND owner = ? AND expires_at > clock_timestamp() FOR SHARE";
    }

    @Override
    public Acquired acquire(Connection c, String name, String owner, long leaseMillis, boolean reentrant,
            boolean countReentry) throws SQLException {
        try (PreparedStatement s = prepare(c, acquire)) {
            s.setString(1, name);
            s.setString(2, owner);
            s.setLong(3, leaseMillis);
            s.setBoolean(4, countReentry);
            s.setBoolean(5, countReentry);
            s.setBoolean(6, countReentry);
            s.setBoolean(7, reentrant);
            try (ResultSet r = s.executeQuery()) {
                if (r.next()) {
                    return new Acquired(true, r.getLong(1), null, 0);
                }
            }
        }
        try (PreparedStatement s = prepare(c, markWaiting)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                // No row: released, or another client's insert of this new name had not committed
                // when the upsert looked. Free now, or nearly: ask again soon.
                return r.next() ? new Acquired(false, 0, r.getString(1), r.getLong(2)) : new Acquired(false, 0, null, 1);
            }
        }
    }

    @Override
    public Long release(Connection c, String name, String owner, int holdsBefore) throws SQLException {
        try (PreparedStatement s = prepare(c, release)) {
            s.setString(1, name);
            s.setString(2, owner);
            s.setString(3, channel);
            return freed(s);
        }
    }

    @Override
    public long rollback(Connection c, String name, String owner, int countBefore) throws SQLException {
        try (PreparedStatement s = prepare(c, rollback)) {
            s.setInt(1, countBefore);
            s.setInt(2, countBefore);
            s.setInt(3, countBefore);
            s.setString(4, name);
            s.setString(5, owner);
            s.setInt(6, countBefore);
            s.setString(7, channel);
            return freed(s) == null ? 0 : 1;
        }
    }

    @Override
    public long keep(Connection c, String name, String owner, long keepMillis) throws SQLException {
        try (PreparedStatement s = prepare(c, keep)) {
            s.setLong(1, keepMillis);
            s.setString(2, name);
            s.setString(3, owner);
            s.setString(4, channel);
            return freed(s) == null ? 0 : 1;
        }
    }

    @Override
    public long forceRelease(Connection c, String name) throws SQLException {
        try (PreparedStatement s = prepare(c, forceRelease)) {
            s.setString(1, name);
            s.setString(2, channel);
            return freed(s) == null ? 0 : 1;
        }
    }

    /** Null when no row changed, 1 when the lock is free now, 0 when still held. */
    private static Long freed(PreparedStatement s) throws SQLException {
        try (ResultSet r = s.executeQuery()) {
            return !r.next() ? null : r.getInt(1) == 0 ? 1L : 0L;
        }
    }

    @Override
    public long[] renew(Connection c, String[] names, String[] owners, long leaseMillis) throws SQLException {
        Set<String> renewed = new HashSet<>();
        try (PreparedStatement s = prepare(c, renew)) {
            s.setLong(1, leaseMillis);
            bindArrays(c, s, 2, names, owners);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    renewed.add(r.getString(1) + '\n' + r.getString(2));
                }
            }
        }
        long[] result = new long[names.length];
        if (renewed.size() == names.length) {
            Arrays.fill(result, RENEWED);
            return result;
        }
        Set<String> forced = new HashSet<>();
        try (PreparedStatement s = prepare(c, forcedAmong)) {
            bindArrays(c, s, 1, names, owners);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    forced.add(r.getString(1) + '\n' + r.getString(2));
                }
            }
        }
        for (int i = 0; i < names.length; i++) {
            String hold = names[i] + '\n' + owners[i];
            result[i] = renewed.contains(hold) ? RENEWED : forced.contains(hold) ? FORCED : GONE;
        }
        return result;
    }

    private static void bindArrays(Connection c, PreparedStatement s, int first, String[] names, String[] owners)
            throws SQLException {
        s.setArray(first, c.createArrayOf("varchar", names));
        s.setArray(first + 1, c.createArrayOf("varchar", owners));
    }

    @Override
    public int sweep(Connection c, long retentionMillis) throws SQLException {
        try (PreparedStatement s = prepare(c, sweep)) {
            s.setLong(1, retentionMillis);
            return s.executeUpdate();
        }
    }

    @Override
    public Row read(Connection c, String name) throws SQLException {
        try (PreparedStatement s = prepare(c, read)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? new Row(r.getString(1), r.getInt(2), r.getLong(3), r.getLong(4)) : null;
            }
        }
    }
}
