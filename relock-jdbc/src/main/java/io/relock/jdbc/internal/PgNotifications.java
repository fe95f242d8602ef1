package io.relock.jdbc.internal;

import io.relock.internal.backend.ChannelListener;
import io.relock.internal.engine.UnlockChannels;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL client's one listening connection: {@code LISTEN} on the table's channel, on a
 * thread of its own that waits for notifications, each naming a freed lock. A lock's waiters
 * need no subscription of their own (see {@code JdbcClient}). When the connection breaks it is
 * opened again with backoff, and every parked waiter asks again once it is back
 * ({@link ChannelListener#onConnected()}): a notification sent in between is not replayed. While
 * it is down, waiters still wake at their holder's expiry.
 */
final class PgNotifications implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PgNotifications.class);

    /** How long one wait for notifications blocks: how soon the thread sees a close. */
    private static final int POLL_MILLIS = 250;
    private static final long MAX_PAUSE_MILLIS = 1000;

    private final DataSource dataSource;
    private final String channel;
    private final ChannelListener listener;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean connected;
    private volatile Connection connection;

    PgNotifications(DataSource dataSource, String channel, ChannelListener listener, String clientId) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.listener = listener;
        this.thread = JdbcGateway.internal(task -> new Thread(task, "relock-listen-" + clientId.substring(0, 8)))
                .newThread(this::run);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean isConnected() {
        return connected;
    }

    private void run() {
        long pauseMillis = 10;
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                connection = c;
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN \"" + channel + "\"");
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                connected = true;
                pauseMillis = 10;
                // Releases while no connection listened were not heard: every waiter asks again.
                listener.onConnected();
                try {
                    listen(pg);
                } catch (SQLException e) {
                    showBrokenToThePool(c);
                    throw e;
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    return;
                }
                if (connected) {
                    LOG.warn("the listening connection to PostgreSQL broke ({}); waiters wake at their holders' "
                            + "expiry until it is back", e.toString());
                } else {
                    LOG.debug("cannot open the listening connection to PostgreSQL: {}", e.toString());
                }
            } finally {
                connected = false;
                connection = null;
            }
            pause(pauseMillis);
            pauseMillis = Math.min(MAX_PAUSE_MILLIS, pauseMillis * 2);
        }
    }

    private void listen(PGConnection pg) throws SQLException {
        while (!closed) {
            PGNotification[] notifications = pg.getNotifications(POLL_MILLIS);
            if (notifications == null) {
                continue;
            }
            for (PGNotification notification : notifications) {
                if (channel.equals(notification.getName())) {
                    listener.onMessage(notification.getParameter(), UnlockChannels.UNLOCK_MESSAGE);
                }
            }
        }
    }

    /**
     * The failure came from the driver's own connection, which the pool's proxy never saw: one
     * statement through the proxy fails as well and lets the pool see that the connection is
     * broken, so that it drops it instead of lending it to the next statement.
     */
    private static void showBrokenToThePool(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT 1");
        } catch (SQLException expected) {
            LOG.debug("the broken listening connection failed through the pool too: {}", expected.toString());
        }
    }

    private void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            // Only close() interrupts this thread: the loop sees the flag.
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(POLL_MILLIS * 4L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
