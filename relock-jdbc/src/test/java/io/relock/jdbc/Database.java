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
 * MariaDB needs its binaries on the machine (see {@link MariaDbServer}); without them its tests
 * are skipped, with the reason. Public for the tests of {@code io.relock.jdbc.internal}.
 */
public enum Database {

    POSTGRESQL(Servers::postgres),
    MARIADB(Servers::mariaDb);

    private final Supplier<String> newDatabaseUrl;

    Database(Supplier<String> newDatabaseUrl) {
        this.newDatabaseUrl = newDatabaseUrl;
    }

    /** A pooled data source on a new, empty database of this kind. */
    public HikariDataSource freshDataSource() {
        return dataSource(newDatabaseUrl.get(), 16);
    }

    /** A pool of {@code size} on the database at {@code url}. */
    static HikariDataSource dataSource(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(2000);
        return new HikariDataSource(config);
    }

    /** The JDBC URL of a new database; for tests that build their own pools. */
    String newDatabaseUrl() {
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
                    "no MariaDB binaries here (set " + MariaDbServer.HOME_VARIABLE + " or put mariadbd on the PATH)");
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
