package io.relock.jdbc;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.internal.Clients;
import io.relock.internal.support.Args;
import io.relock.jdbc.internal.JdbcClient;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Relock on the database you already run: PostgreSQL 15+, MySQL 8+ or MariaDB 10.11+, through
 * your {@link DataSource}. The result is a {@link Relock} like the Redis one: the same locks,
 * leases and watchdog, fencing tokens, loss signals, {@code holdAtLeast}, leader election,
 * listeners and observers.
 *
 * <pre>{@code
 * Relock relock = RelockJdbc.builder(dataSource).createTable(true).build();
 * DistributedLock lock = relock.getLock("order:42");
 * }</pre>
 *
 * <p>Each lock is a row of one table (by default {@code relock_lock}): its owner, hold count,
 * fencing token and lease end, judged by the database's clock, never the client's. Every
 * statement runs on a connection of its own from the data source, in autocommit at READ
 * COMMITTED, never in a transaction of the caller. An uncontended acquire and a release are one
 * statement each. On PostgreSQL waiters wake on {@code NOTIFY}; on MySQL and MariaDB they ask
 * again with capped backoff (every 25 to 50 ms at worst).
 *
 * <p>Not here: fair and read-write locks ({@code getFairLock} and {@code getReadWriteLock}
 * throw {@link UnsupportedOperationException}), and the settings of {@link RelockConfig} that
 * name Redis (servers, key prefix, replica sync) are not read.
 */
public final class RelockJdbc {

    /** The table's name unless {@link Builder#table} says otherwise. */
    public static final String DEFAULT_TABLE = "relock_lock";
    /** How long a free lock's row stays unless {@link Builder#retention} says otherwise. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(1);

    /** The server of the default config of a JDBC client: never connected to. */
    public static final String PLACEHOLDER_SERVER = "redis://relock-jdbc.invalid:6379";

    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private RelockJdbc() {}

    /**
     * Starts building a client on {@code dataSource}.
     *
     * @param dataSource where the connections come from
     * @return a builder with the defaults
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(Args.notNull(dataSource, "dataSource"));
    }

    /**
     * The DDL that creates the lock table, as {@link Builder#createTable(boolean)} runs it: for
     * Flyway, Liquibase or a DBA. Also in the jar as {@code io/relock/jdbc/schema-postgresql.sql}
     * and {@code io/relock/jdbc/schema-mysql.sql}, with {@code {table}} for the name.
     *
     * @param database {@code "PostgreSQL"}, {@code "MySQL"} or {@code "MariaDB"} (any case)
     * @param table the table's name
     * @return the DDL, one {@code CREATE TABLE IF NOT EXISTS} statement
     * @throws IllegalArgumentException if the database is none of those, or the name is not a
     *     plain SQL identifier (letters, digits, underscores, at most one schema qualifier)
     */
    public static String ddl(String database, String table) {
        Args.notNull(database, "database");
        return JdbcClient.ddl(database, checkTable(table));
    }

    private static String checkTable(String table) {
        Args.notNull(table, "table");
        Args.require(TABLE.matcher(table).matches(), "table must be a plain SQL identifier, optionally with a schema "
                + "(letters, digits and underscores, not starting with a digit, at most 63 each): '%s'", table);
        return table;
    }

    /** Settings of a JDBC client; {@link #build()} starts it. */
    public static final class Builder {

        private final DataSource dataSource;
        private DataSource listenDataSource;
        private String table = DEFAULT_TABLE;
        private boolean createTable;
        private RelockConfig config;
        private int statementThreads = 8;
        private Duration retention = DEFAULT_RETENTION;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The lock table's name, optionally with its schema ({@code locks.relock_lock}).
         *
         * @param table the name
         * @return this builder
         * @throws IllegalArgumentException if it is not a plain SQL identifier
         */
        public Builder table(String table) {
            this.table = checkTable(table);
            return this;
        }

        /**
         * Whether {@link #build()} creates the table if it is missing ({@code CREATE TABLE IF NOT EXISTS}); default false.
         *
         * @param createTable whether to create it
         * @return this builder
         */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * The settings shared with the Redis client: {@code watchdogTimeout}, {@code commandTimeout}
         * (each statement's query timeout, in whole seconds), {@code spinBackoff}, observers and
         * {@code releaseOnShutdown}; its servers are not used (any will do). Default: Relock's
         * defaults, whose server is a placeholder ({@link #PLACEHOLDER_SERVER}) that
         * {@code Relock.config()} reports.
         *
         * @param config the settings
         * @return this builder
         * @throws NullPointerException if {@code config} is null
         */
        public Builder config(RelockConfig config) {
            this.config = Args.notNull(config, "config");
            return this;
        }

        /**
         * On PostgreSQL, where the client's one listening connection ({@code LISTEN}) comes from;
         * it is held for the client's life. Default: the data source itself, which then lends one
         * connection for good. Give an unpooled data source to keep it out of the pool (and behind
         * PgBouncer, one that reaches the server directly: LISTEN needs a session).
         *
         * @param listenDataSource where the listening connection comes from
         * @return this builder
         * @throws NullPointerException if {@code listenDataSource} is null
         */
        public Builder listenDataSource(DataSource listenDataSource) {
            this.listenDataSource = Args.notNull(listenDataSource, "listenDataSource");
            return this;
        }

        /**
         * How many statements the client runs at once (its statement threads; JDBC blocks); keep
         * the data source's pool at least this large. Default 8.
         *
         * @param statementThreads how many
         * @return this builder
         * @throws IllegalArgumentException if not between 1 and 256
         */
        public Builder statementThreads(int statementThreads) {
            Args.require(statementThreads >= 1 && statementThreads <= 256,
                    "statementThreads must be between 1 and 256: %s", statementThreads);
            this.statementThreads = statementThreads;
            return this;
        }

        /**
         * How long the row of a free lock stays before a client deletes it: rows of names used
         * once do not pile up. Tokens still only grow after a row is deleted: a new row's token
         * is the database clock's microseconds, above every token of the deleted row unless that
         * clock went back by more than the retention. Default one hour.
         *
         * <p>Each client deletes such rows on a watchdog tick, at most once every quarter of the
         * retention (and at least a second apart), in one statement.
         *
         * @param retention how long
         * @return this builder
         * @throws IllegalArgumentException if shorter than one second
         */
        public Builder retention(Duration retention) {
            Args.notNull(retention, "retention");
            Args.require(retention.compareTo(Duration.ofSeconds(1)) >= 0, "retention must be at least one second: %s",
                    retention);
            this.retention = retention;
            return this;
        }

        /**
         * Connects, checks the table (or creates it) and starts the client.
         *
         * @return the client; close it when done
         * @throws io.relock.RelockConnectionException if the database cannot be reached
         * @throws io.relock.RelockException if the table is missing or not Relock's, or cannot be
         *     created; the message names the DDL
         * @throws IllegalArgumentException if the database is not PostgreSQL, MySQL or MariaDB
         */
        public Relock build() {
            RelockConfig settings = config == null
                    ? RelockConfig.builder().singleServer(PLACEHOLDER_SERVER).build() : config;
            return Clients.relock(JdbcClient.start(new JdbcClient.Settings(dataSource,
                    Objects.requireNonNullElse(listenDataSource, dataSource), table, createTable, settings,
                    statementThreads, retention)));
        }
    }
}
