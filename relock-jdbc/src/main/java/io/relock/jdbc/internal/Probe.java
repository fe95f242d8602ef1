package io.relock.jdbc.internal;

import io.relock.RelockConnectionException;
import io.relock.RelockException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import javax.sql.DataSource;

/** What a client learns from its first connection: which database it is, where, and that the table is there. */
record Probe(Dialect dialect, String target, boolean setIsolation) {

    static Probe of(DataSource dataSource, String table, boolean createTable) {
        try (Connection c = dataSource.getConnection()) {
            DatabaseMetaData meta = c.getMetaData();
            Dialect dialect = dialectOf(meta.getDatabaseProductName(), table);
            String target = withoutCredentials(meta.getURL());
            // PostgreSQL re-checks a changed row in an upsert at READ COMMITTED and fails it at
            // REPEATABLE READ and above; MySQL's locking statements read the latest row at any level.
            boolean setIsolation = dialect instanceof PostgresDialect
                    && c.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED;
            if (createTable) {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute(dialect.ddl());
                } catch (SQLException e) {
                    throw new RelockException("could not create the lock table '" + table + "' on "
                            + dialect.product() + ": " + e.getMessage(), e);
                }
            }
            return new Probe(dialect, target, setIsolation);
        } catch (SQLException e) {
            throw new RelockConnectionException("cannot connect to the database: " + e.getMessage(), e);
        }
    }

    /** The dialect of a database by the product name its driver reports. */
    static Dialect dialectOf(String product, String table) {
        String name = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (name.contains("postgresql")) {
            return new PostgresDialect(table);
        }
        if (name.contains("mysql") || name.contains("mariadb")) {
            return new MySqlDialect(table, name.contains("mariadb"));
        }
        throw new IllegalArgumentException("Relock has no lock table for " + product
                + "; it supports PostgreSQL 15+, MySQL 8+ and MariaDB 10.11+");
    }

    /** A URL for messages: user and password parameters dropped. */
    static String withoutCredentials(String url) {
        if (url == null) {
            return "(unknown URL)";
        }
        int query = url.indexOf('?');
        String base = query < 0 ? url : url.substring(0, query);
        int at = base.indexOf('@');
        int scheme = base.indexOf("//");
        return at > scheme && scheme >= 0 ? base.substring(0, scheme + 2) + base.substring(at + 1) : base;
    }
}
