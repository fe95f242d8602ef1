package io.relock.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.h2.H2ConnectionOption;
import io.r2dbc.spi.ConnectionFactory;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.h2.tools.Server;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The SQL database of one demo run, for the recharge scenarios: the tables
 * {@code <prefix>account(id, balance)} and {@code <prefix>orders(id, account_id, status, fence_token)}
 * under a per-run prefix ({@code relock_demo_<run id>_}), created by {@link #open} and dropped
 * by {@link #dropTables()}.
 *
 * <p>By default an H2 database in this JVM's memory, which the service instances (Spring
 * contexts in this JVM) share, and which an H2 TCP server on loopback serves to the fencing
 * scenario's child JVM; {@link #close()} ends both. The reactive run of scenario 2a reaches the
 * same in-memory database through R2DBC ({@link #newReactiveConnections}): r2dbc-h2 opens it in
 * this JVM by its name. Or the user's PostgreSQL or MariaDB (given with {@code --jdbc}), where
 * the run touches only its own tables, and which the demo reaches through JDBC only.
 *
 * <p>Nothing here makes a recharge idempotent: the orders table has no constraint that would
 * refuse a second payment; only a lock, or a fencing token, does that.
 */
final class RechargeDatabase implements AutoCloseable {

    /**
     * How long the in-process H2 takes to commit, on purpose: a remote database's commit is a
     * network round trip and a disk flush; H2 in memory commits in microseconds, which would
     * hide the window between an unlock and the commit that scenario 2a shows.
     */
    static final Duration H2_COMMIT_LATENCY = Duration.ofMillis(5);

    /** The demo's own H2: its admin user (no password), and how long a statement waits for a row lock. */
    private static final String H2_USER = "sa";
    private static final int H2_LOCK_TIMEOUT_MILLIS = 10_000;

    /** Where the database comes from, for the report. */
    private final String origin;
    private final String jdbcUrl;
    private final String remoteJdbcUrl;
    private final String user;
    private final String password;
    /** The demo's own H2's in-memory name; {@code null} for a user's database. */
    private final String h2Name;
    private final Tables tables;
    private final Duration commitLatency;
    private final Server tcpServer;
    private final JdbcTemplate jdbc;
    private final String product;

    /** The run's table names. */
    record Tables(String account, String orders) {

        static Tables forRun(String runId) {
            String prefix = "relock_demo_" + runId + "_";
            return new Tables(prefix + "account", prefix + "orders");
        }
    }

    private RechargeDatabase(String origin, String jdbcUrl, String remoteJdbcUrl, String user, String password,
            String h2Name, Tables tables, Duration commitLatency, Server tcpServer) {
        this.origin = origin;
        this.jdbcUrl = jdbcUrl;
        this.remoteJdbcUrl = remoteJdbcUrl;
        this.user = user;
        this.password = password;
        this.h2Name = h2Name;
        this.tables = tables;
        this.commitLatency = commitLatency;
        this.tcpServer = tcpServer;
        DriverManagerDataSource setup = new DriverManagerDataSource(jdbcUrl);
        // Unset credentials stay unset, so that the driver applies its defaults.
        setup.setUsername(user);
        setup.setPassword(password);
        this.jdbc = new JdbcTemplate(setup);
        this.product = jdbc.execute((Connection connection) -> {
            DatabaseMetaData metaData = connection.getMetaData();
            return metaData.getDatabaseProductName() + " " + metaData.getDatabaseProductVersion();
        });
    }

    /**
     * Opens the run's database and creates its tables.
     *
     * @param commandLine {@code --jdbc} and its credentials, if given
     * @param runId the run's id, in every table name
     * @throws RuntimeException if the database cannot be reached or the tables cannot be created
     */
    static RechargeDatabase open(CommandLine commandLine, String runId) {
        Tables tables = Tables.forRun(runId);
        RechargeDatabase database;
        if (commandLine.jdbcUrl() == null) {
            database = ownH2(runId, tables);
        } else {
            String url = commandLine.jdbcUrl();
            database = new RechargeDatabase("at " + CommandLine.redactJdbc(url) + " (given with --jdbc)", url, url,
                    commandLine.jdbcUser(), commandLine.jdbcPassword(), null, tables, Duration.ZERO, null);
        }
        try {
            database.createTables();
        } catch (RuntimeException e) {
            try {
                database.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        return database;
    }

    private static RechargeDatabase ownH2(String runId, Tables tables) {
        // DB_CLOSE_DELAY=-1: the database lives until the run drops it, between connections too.
        String name = "relock-demo-" + runId;
        String url = "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=" + H2_LOCK_TIMEOUT_MILLIS;
        Server tcpServer;
        try {
            // Port 0: a free one. Without -tcpAllowOthers H2 accepts connections from this machine only.
            tcpServer = Server.createTcpServer("-tcpPort", "0").start();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot start an H2 TCP server for the fencing scenario's child JVM", e);
        }
        String remoteUrl = "jdbc:h2:tcp://127.0.0.1:" + tcpServer.getPort() + "/mem:" + name
                + ";LOCK_TIMEOUT=" + H2_LOCK_TIMEOUT_MILLIS;
        try {
            return new RechargeDatabase("in this JVM's memory, served to child JVMs on 127.0.0.1:" + tcpServer.getPort()
                    + "; gone at the end", url, remoteUrl, H2_USER, "", name, tables, H2_COMMIT_LATENCY, tcpServer);
        } catch (RuntimeException e) {
            tcpServer.stop();
            throw e;
        }
    }

    private void createTables() {
        jdbc.execute("CREATE TABLE " + tables.account() + " (id VARCHAR(40) PRIMARY KEY, balance BIGINT NOT NULL)");
        try {
            // No unique "paid once" constraint, no version column: the status check is all there is.
            jdbc.execute("CREATE TABLE " + tables.orders() + " (id VARCHAR(40) PRIMARY KEY,"
                    + " account_id VARCHAR(40) NOT NULL, status VARCHAR(10) NOT NULL, fence_token BIGINT NOT NULL)");
        } catch (RuntimeException e) {
            jdbc.execute("DROP TABLE " + tables.account());
            throw e;
        }
    }

    /** The database's product and version, and where it is, for the report. */
    String description() {
        return product + " " + origin;
    }

    /** The database's product and version, for the report. */
    String product() {
        return product;
    }

    /** The run's table names. */
    Tables tables() {
        return tables;
    }

    /** How long every commit of a service instance is made to take; zero on a user's database. */
    Duration commitLatency() {
        return commitLatency;
    }

    /** The URL another JVM on this machine connects with. */
    String remoteJdbcUrl() {
        return remoteJdbcUrl;
    }

    /** The user to connect as, or {@code null}. */
    String user() {
        return user;
    }

    /** The password, or {@code null}. */
    String password() {
        return password;
    }

    /**
     * A connection pool for one service instance, each connection in {@code READ COMMITTED}.
     *
     * @param name the pool's name, for the pool's own logs
     * @param size its largest number of connections
     */
    HikariDataSource newPool(String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        return new HikariDataSource(config);
    }

    /**
     * Whether the reactive run can reach this database through R2DBC: only the demo's own H2,
     * whose R2DBC driver the demo carries; not a user's PostgreSQL or MariaDB.
     */
    boolean reactive() {
        return h2Name != null;
    }

    /**
     * R2DBC connections to the demo's own H2, for one service instance: the same in-memory
     * database (same name, same user) as the JDBC pools, so the two see each other's rows.
     * H2 in memory needs no pool: each connection is a session of the engine in this JVM.
     *
     * @throws IllegalStateException if the database is a user's ({@link #reactive()} is false)
     */
    ConnectionFactory newReactiveConnections() {
        if (h2Name == null) {
            throw new IllegalStateException("R2DBC reaches only the demo's own H2, not " + origin);
        }
        return new H2ConnectionFactory(H2ConnectionConfiguration.builder().inMemory(h2Name)
                .username(H2_USER).password("")
                .property(H2ConnectionOption.DB_CLOSE_DELAY, "-1")
                .property("LOCK_TIMEOUT", String.valueOf(H2_LOCK_TIMEOUT_MILLIS))
                .build());
    }

    /** Adds an unpaid order into a new account at balance 0. */
    void openOrder(String orderId, String accountId) {
        jdbc.update("INSERT INTO " + tables.account() + " (id, balance) VALUES (?, 0)", accountId);
        jdbc.update("INSERT INTO " + tables.orders() + " (id, account_id, status, fence_token) VALUES (?, ?, 'NEW', 0)",
                orderId, accountId);
    }

    /** An account's balance. */
    long balance(String accountId) {
        Long balance = jdbc.queryForObject("SELECT balance FROM " + tables.account() + " WHERE id = ?", Long.class,
                accountId);
        if (balance == null) {
            throw new IllegalStateException("no balance for account " + accountId);
        }
        return balance;
    }

    /** An order's fencing token: the largest token that wrote it, 0 if none. */
    long fenceToken(String orderId) {
        Long token = jdbc.queryForObject("SELECT fence_token FROM " + tables.orders() + " WHERE id = ?", Long.class,
                orderId);
        if (token == null) {
            throw new IllegalStateException("no fence token for order " + orderId);
        }
        return token;
    }

    /**
     * Drops the run's tables.
     *
     * @return what was dropped, for the report
     */
    List<String> dropTables() {
        List<String> dropped = new ArrayList<>();
        for (String table : List.of(tables.orders(), tables.account())) {
            jdbc.execute("DROP TABLE " + table);
            dropped.add(table);
        }
        return dropped;
    }

    /**
     * For the demo's own H2: shuts the in-memory database down and stops its TCP server. Nothing
     * for a user's database: its tables are left to {@link #dropTables()}.
     */
    @Override
    public void close() {
        if (tcpServer == null) {
            return;
        }
        try {
            jdbc.execute("SHUTDOWN");
        } finally {
            tcpServer.stop();
        }
    }
}
