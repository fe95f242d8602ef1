package io.relock.spring;

import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.jdbc.LeaseCheck;
import java.sql.Connection;
import java.util.List;
import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The exact check before commit for locks kept in the database the transaction writes to
 * ({@code relock-jdbc}): the lease is read with a locking read in the transaction's own
 * connection ({@link LeaseCheck}). Loaded only when relock-jdbc and spring-jdbc are present
 * ({@code RelockLocks.JDBC_PRESENT}).
 */
final class JdbcLeases {

    private JdbcLeases() {}

    /**
     * Checks each of {@code lockNames} in the current transaction when {@code client} is a JDBC
     * client and the transaction runs on its data source.
     *
     * @return false when this check does not apply (then the caller asks the usual way)
     * @throws LockLostException if a lock is not held by {@code owner}
     */
    static boolean verifyInTransaction(Relock client, List<String> lockNames, long owner) {
        if (!LeaseCheck.appliesTo(client)) {
            return false;
        }
        DataSource dataSource = LeaseCheck.dataSource(client);
        if (!TransactionSynchronizationManager.hasResource(dataSource)) {
            return false; // the transaction writes to another database: only the narrowed check applies
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            for (String name : lockNames) {
                LeaseCheck.verify(client, connection, name, owner);
            }
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
        return true;
    }
}
