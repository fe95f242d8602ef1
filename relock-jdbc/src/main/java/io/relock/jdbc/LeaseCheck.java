package io.relock.jdbc;

import io.relock.DistributedLock;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockException;
import io.relock.internal.Client;
import io.relock.internal.Clients;
import io.relock.internal.support.Args;
import io.relock.jdbc.internal.JdbcClient;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/**
 * The one check no lock on a separate store can make: that a lock is still held, asked inside
 * the transaction that writes the data it guards, on the same database. Call it just before the
 * commit, on the transaction's connection. It reads the lock's row with a locking read
 * ({@code FOR SHARE} on PostgreSQL, {@code LOCK IN SHARE MODE} on MySQL and MariaDB), so the
 * answer holds until the transaction ends: no other client can take the lock, renew it or
 * force-unlock it before this transaction has committed or rolled back. A holder whose lease ran
 * out while it was paused, or whose lock was force-unlocked, gets {@link LockLostException}
 * and its transaction rolls back: exact, with no fencing code in the application.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     // ... the guarded writes ...
 *     LeaseCheck.verify(relock, c, lock);   // throws if the hold is gone
 *     c.commit();
 * }
 * }</pre>
 *
 * <p>With Spring, {@code @WithLock} and {@code RelockTemplate} make this check by themselves
 * before a transaction that began inside the guarded call commits, when the lock's client is a
 * JDBC one and the transaction runs on the lock table's data source.
 *
 * <p>While the transaction holds the row, the lock's own watchdog waits for it too: keep such a
 * transaction shorter than two thirds of the watchdog timeout.
 */
public final class LeaseCheck {

    private LeaseCheck() {}

    /**
     * Whether {@code relock} keeps its locks in a database, so that {@link #verify} applies.
     *
     * @param relock a client
     * @return true for a client built by {@link RelockJdbc}
     * @throws NullPointerException if {@code relock} is null
     */
    public static boolean appliesTo(Relock relock) {
        return Clients.clientOf(Args.notNull(relock, "relock")) instanceof JdbcClient;
    }

    /**
     * The data source through which {@code relock} reaches its lock table: a transaction on it
     * can be checked with {@link #verify}.
     *
     * @param relock a JDBC client
     * @return its data source
     * @throws IllegalArgumentException if {@code relock} is not a JDBC client
     * @throws NullPointerException if {@code relock} is null
     */
    public static DataSource dataSource(Relock relock) {
        return jdbc(relock).dataSource();
    }

    private static JdbcClient jdbc(Relock relock) {
        Client client = Clients.clientOf(Args.notNull(relock, "relock"));
        if (!(client instanceof JdbcClient jdbc)) {
            throw new IllegalArgumentException("relock " + relock.clientId() + " keeps its locks on Redis: the lease "
                    + "can only be checked in a transaction of the database that keeps it (RelockJdbc)");
        }
        return jdbc;
    }

    /**
     * Checks, in the transaction of {@code connection}, that the current thread holds
     * {@code lock}.
     *
     * @param relock the JDBC client the lock belongs to
     * @param connection a connection in the transaction to guard, on the lock table's database
     * @param lock the lock, from {@code relock}
     * @throws LockLostException if the current thread does not hold it by the database's clock
     *     (roll the transaction back)
     * @throws IllegalArgumentException if {@code relock} is not a JDBC client
     * @throws RelockException if the database fails the read (also when the table is not on this connection's database)
     * @throws NullPointerException if an argument is null
     */
    public static void verify(Relock relock, Connection connection, DistributedLock lock) {
        Args.notNull(lock, "lock");
        verify(relock, connection, lock.getName(), Thread.currentThread().getId());
    }

    /**
     * Checks, in the transaction of {@code connection}, that owner {@code ownerId} holds the lock
     * named {@code lockName}.
     *
     * @param relock the JDBC client that holds it
     * @param connection a connection in the transaction to guard, on the lock table's database
     * @param lockName the lock's name
     * @param ownerId the owner: a thread id, or an id from {@link Relock#newOwnerId()}
     * @throws LockLostException if that owner does not hold it by the database's clock (roll the
     *     transaction back)
     * @throws IllegalArgumentException if {@code relock} is not a JDBC client
     * @throws RelockException if the database fails the read (also when the table is not on this connection's database)
     * @throws NullPointerException if an argument is null
     */
    public static void verify(Relock relock, Connection connection, String lockName, long ownerId) {
        Args.notNull(connection, "connection");
        Args.notNull(lockName, "lockName");
        JdbcClient jdbc = jdbc(relock);
        String owner = jdbc.field(ownerId);
        boolean held;
        try {
            held = jdbc.gateway().dialect().holdsInTransaction(connection, lockName, owner);
        } catch (SQLException e) {
            throw new RelockException("could not check lock '" + lockName + "' in the transaction (table '"
                    + jdbc.gateway().dialect().table() + "'): " + e.getMessage(), e);
        }
        if (!held) {
            throw new LockLostException(List.of(lockName), ownerId, new IllegalStateException("the lock table '"
                    + jdbc.gateway().dialect().table() + "' does not show owner " + owner + " holding it with a lease"
                    + " still valid by the database's clock"), true);
        }
    }
}
