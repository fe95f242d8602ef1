package io.relock.jdbc.internal;

import io.relock.RelockConnectionException;
import io.relock.RelockException;
import io.relock.RelockTimeoutException;
import io.relock.internal.backend.DurableGateway;
import io.relock.internal.backend.Renewal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import javax.sql.DataSource;

/**
 * Every statement of a JDBC client: each on a connection of its own from the application's
 * {@link DataSource}, in autocommit at READ COMMITTED, never inside a transaction of the caller,
 * run on the client's statement threads so that no caller's thread and no timer thread blocks
 * on the database. A failure completes the future with a {@link RelockException} that names the
 * operation; a lost connection with {@link RelockConnectionException}.
 */
public final class JdbcGateway extends DurableGateway {

    /** One statement's work on a connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection, Dialect dialect) throws SQLException;
    }

    /** Marks a renewal as this back end's: the statement is the dialect's, for every lock type. */
    static final Renewal RENEWAL = new Renewal() {
        @Override
        public String toString() {
            return "jdbc-renewal";
        }
    };

    private final DataSource dataSource;
    private final Dialect dialect;
    private final ExecutorService statements;
    private final int queryTimeoutSeconds;
    private final String target;
    /** Whether the pool hands out connections at another isolation than READ COMMITTED (see {@link #prepare}). */
    private final boolean setIsolation;
    private volatile boolean reachable = true;

    JdbcGateway(DataSource dataSource, Dialect dialect, ExecutorService statements, long commandTimeoutMillis,
            String target, boolean setIsolation) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.statements = statements;
        this.queryTimeoutSeconds = (int) Math.max(1, (commandTimeoutMillis + 999) / 1000);
        this.target = target;
        this.setIsolation = setIsolation;
        dialect.queryTimeout(queryTimeoutSeconds);
    }

    public Dialect dialect() {
        return dialect;
    }

    /** Where the database is, for messages. */
    public String target() {
        return target;
    }

    /** Whether the last statement reached the database. */
    public boolean isReachable() {
        return reachable;
    }

    /**
     * Runs {@code work} on the calling thread when that thread is a caller blocked in the
     * synchronous API ({@code callerBlocks}), since it waits for the answer anyway: no hand-over
     * to a statement thread and back. Anywhere else (an async caller, the client's own threads:
     * a later attempt woken by a release or a timer) it goes to a statement thread.
     */
    public <T> CompletableFuture<T> submitOnCaller(String operation, boolean callerBlocks, Work<T> work) {
        if (!callerBlocks || onInternalThread()) {
            return submit(operation, work);
        }
        // The statement runs to its end whatever the caller's interrupt, as one sent to Redis
        // would: an acquire cut short might hold a lock nobody knows of. The flag is kept for the
        // engine, which decides after the answer whether the interrupt ends the wait (lock()
        // ignores it). A pool gives no connection to an interrupted thread, hence the clearing.
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    return CompletableFuture.completedFuture(runNow(operation, work));
                } catch (RelockException e) {
                    if (!interruptedWhileBorrowing(e)) {
                        throw e;
                    }
                    interrupted = true;
                    Thread.interrupted();
                }
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether a statement failed only because its thread was interrupted while it waited for a connection. */
    private static boolean interruptedWhileBorrowing(RelockException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /** Runs {@code work} on a statement thread; {@code operation} names it in a failure, e.g. "acquire lock 'x'". */
    public <T> CompletableFuture<T> submit(String operation, Work<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            statements.execute(() -> {
                try {
                    result.complete(runNow(operation, work));
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new IllegalStateException("Relock client is closed", e));
        }
        return result;
    }

    /** Runs {@code work} on the calling thread. */
    public <T> T runNow(String operation, Work<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            prepare(connection);
            T value = work.run(connection, dialect);
            reachable = true;
            return value;
        } catch (SQLException e) {
            throw translate(operation, e);
        }
    }

    /**
     * Autocommit, whatever the pool hands out: each statement is its own transaction. READ
     * COMMITTED only where the pool's connections are at another level (asked once, at start:
     * asking each connection costs a round trip on PostgreSQL, setting it two).
     */
    private void prepare(Connection connection) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.setAutoCommit(true);
        }
        if (setIsolation) {
            connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    RelockException translate(String operation, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        if (e instanceof SQLTimeoutException) {
            return new RelockTimeoutException(dialect.product() + " did not answer in time: " + operation + ": "
                    + e.getMessage(), e);
        }
        if (connectionLost(e, state)) {
            reachable = false;
            return new RelockConnectionException("cannot reach " + dialect.product() + " at " + target + ": "
                    + operation + ": " + e.getMessage(), e);
        }
        if (state.equals("42P01") || state.equals("42S02") || state.equals("42703") || state.equals("42S22")) {
            return new RelockException(operation + ": the lock table '" + dialect.table + "' is missing or is not "
                    + "Relock's (" + e.getMessage() + "); create it with the DDL of RelockJdbc.ddl, the resource "
                    + "io/relock/jdbc/" + dialect.schemaResource() + ", or let Relock create it at start "
                    + "(RelockJdbc.Builder.createTable(true))", e);
        }
        return new RelockException(dialect.product() + " failed: " + operation + ": " + e.getMessage(), e);
    }

    private static boolean connectionLost(SQLException e, String state) {
        return e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException
                || e instanceof SQLRecoverableException || state.startsWith("08")
                // PostgreSQL: the server shuts down or was restarted under the session.
                || state.equals("57P01") || state.equals("57P02") || state.equals("57P03");
    }

    @Override
    public long connectionEpoch() {
        return 0;
    }

    /** One statement for the whole batch, whatever the lock types. */
    @Override
    public CompletableFuture<List<Object>> renew(Renewal renewal, String[] keys, String[] args) {
        long leaseMillis = Long.parseLong(args[0]);
        String[] owners = new String[keys.length];
        System.arraycopy(args, 1, owners, 0, keys.length);
        return submit("renew " + keys.length + " lock(s)", (c, d) -> {
            long[] answers = d.renew(c, keys, owners, leaseMillis);
            List<Object> reply = new ArrayList<>(answers.length);
            for (long answer : answers) {
                reply.add(answer);
            }
            return reply;
        });
    }
}
