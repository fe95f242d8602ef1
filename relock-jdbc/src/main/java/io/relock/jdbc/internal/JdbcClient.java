package io.relock.jdbc.internal;

import io.relock.ClientInfo;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.FencedLock;
import io.relock.LockInfo;
import io.relock.RelockConfig;
import io.relock.internal.ClientLife;
import io.relock.internal.StoreClient;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.engine.WaitPolicy;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.support.Args;
import io.relock.internal.support.Futures;
import io.relock.internal.types.FencedEngineLock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Relock client on a database: the engine, the watchdog and the lock types of the Redis
 * client, over the lease table instead of keys. Its threads: the statement threads (JDBC
 * blocks), two workers for listeners and elections, the timer, and on PostgreSQL the listening
 * thread.
 */
public final class JdbcClient extends StoreClient {
    private static final Logger LOG = LoggerFactory.getLogger(JdbcClient.class);

    /** The longest a lock's name may be: the table's {@code name} column. */
    public static final int MAX_NAME_LENGTH = 255;
    /** Where nothing tells a waiter of a release (MySQL, MariaDB): the first pause of its backoff. */
    public static final Duration POLL_INITIAL = Duration.ofMillis(5);
    /** ... and its cap: a waiter asks again at most this long (at least half of it) after the last try. */
    public static final Duration POLL_MAX = Duration.ofMillis(50);

    private final DataSource dataSource;
    private final JdbcGateway gateway;
    private final UnlockChannels channels;
    private final PgNotifications listening;
    private final Watchdog watchdog;
    private final ClientLife life;
    private final WaitPolicy waitPolicy;
    private final WaitPolicy spinPolicy;
    private final long retentionMillis;
    private final AtomicLong nextSweepNanos = new AtomicLong(System.nanoTime());

    /**
     * What {@code RelockJdbc.Builder} settled.
     *
     * @param listenDataSource where PostgreSQL's listening connection comes from
     * @param retention how long a free lock's row stays before a client deletes it
     */
    public record Settings(DataSource dataSource, DataSource listenDataSource, String table, boolean createTable,
            RelockConfig config, int statementThreads, Duration retention) {}

    private JdbcClient(Settings settings, Dialect dialect, String target, boolean setIsolation) {
        super(settings.config(), "relock-jdbc", "statement", settings.statementThreads());
        this.dataSource = settings.dataSource();
        this.gateway = new JdbcGateway(settings.dataSource(), dialect, calls(), config().commandTimeout().toMillis(),
                target, setIsolation);
        this.retentionMillis = settings.retention().toMillis();
        this.channels = new UnlockChannels(NOTHING_TO_SUBSCRIBE, timer(), false);
        if (dialect instanceof PostgresDialect postgres) {
            this.listening = new PgNotifications(settings.listenDataSource(), postgres.channel(), channels, clientId());
            this.waitPolicy = WaitPolicy.PUB_SUB;
        } else {
            this.listening = null;
            this.waitPolicy = WaitPolicy.backoff(POLL_INITIAL, POLL_MAX);
        }
        this.spinPolicy = WaitPolicy.backoff(config().spinBackoffInitial(), config().spinBackoffMax());
        this.life = newLife(() -> {
            if (listening != null) {
                listening.close();
            }
        });
        this.watchdog = new Watchdog(gateway, timer(), this::nanoTime, config().watchdogTimeout().toMillis(),
                life::lost, observers(), this::sweepNowAndThen);
    }

    /**
     * Reaches the database, finds out which it is, checks (or creates) the table, and starts the
     * watchdog and, on PostgreSQL, the listening connection.
     *
     * @throws io.relock.RelockConnectionException if the database cannot be reached
     * @throws io.relock.RelockException if the table is missing or not Relock's (the message names the DDL)
     * @throws IllegalArgumentException if the database is not one Relock supports
     */
    public static JdbcClient start(Settings settings) {
        Probe probe = Probe.of(settings.dataSource(), settings.table(), settings.createTable());
        JdbcClient client = new JdbcClient(settings, probe.dialect(), probe.target(), probe.setIsolation());
        try {
            client.gateway.runNow("check the lock table '" + settings.table() + "'", (c, d) -> {
                d.check(c);
                return null;
            });
        } catch (RuntimeException e) {
            client.shutDownThreads(1000);
            throw e;
        }
        if (client.listening != null) {
            client.listening.start();
        }
        client.watchdog.start();
        LOG.debug("Relock client {} on {} at {}, table {}", client.clientId(), probe.dialect().product(),
                probe.target(),
                settings.table());
        return client;
    }

    /** The DDL of the lock table on {@code database} (PostgreSQL, MySQL, MariaDB), for a table named {@code table}. */
    public static String ddl(String database, String table) {
        return Probe.dialectOf(database, table).ddl();
    }

    /** On a watchdog tick, at most every quarter of the retention: deletes the rows of long-free locks. */
    private void sweepNowAndThen() {
        long now = nanoTime();
        long next = nextSweepNanos.get();
        if (now - next < 0 || !nextSweepNanos.compareAndSet(next, now + TimeUnit.MILLISECONDS.toNanos(
                Math.max(1000, retentionMillis / 4)))) {
            return;
        }
        gateway.submit("delete the rows of locks free for " + retentionMillis + " ms",
                (c, d) -> d.sweep(c, retentionMillis)).whenComplete((deleted, error) -> {
                    if (error != null) {
                        LOG.debug("could not delete long-free lock rows: {}", error.toString());
                    } else if (deleted > 0) {
                        LOG.debug("deleted {} long-free lock row(s)", deleted);
                    }
                });
    }

    /** Where the lock table is reached. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** The lock's names here: the row's key is the name itself, and so is its notification. */
    private LockKeys keys(String name) {
        Args.lockName(name);
        int length = name.codePointCount(0, name.length());
        Args.require(length <= MAX_NAME_LENGTH, "name is %d characters long; the lock table's name column holds at "
                + "most %d", length, MAX_NAME_LENGTH);
        Args.require(name.indexOf('\0') < 0, "name must not contain the character U+0000, which SQL text cannot hold");
        return new LockKeys(name, name, name);
    }

    private JdbcDriver driver(String name, String type, boolean reentrant) {
        return new JdbcDriver(gateway, name, type, reentrant);
    }

    @Override
    public DistributedLock reentrantLock(String name) {
        LockKeys keys = keys(name);
        return new LockEngine(this, keys, driver(name, "reentrant", true), waitPolicy);
    }

    @Override
    public DistributedLock fairLock(String name) {
        keys(name);
        throw new UnsupportedOperationException("fair locks are not available on " + gateway.dialect().product()
                + " yet: its waiters would need a queue table to keep their order across clients; use getLock, "
                + "or a fair lock on Redis");
    }

    @Override
    public FencedLock fencedLock(String name) {
        LockKeys keys = keys(name);
        return new FencedEngineLock(this, keys, driver(name, "fenced", true), waitPolicy);
    }

    @Override
    public DistributedLock simpleLock(String name) {
        LockKeys keys = keys(name);
        return new LockEngine(this, keys, driver(name, "simple", false), waitPolicy);
    }

    @Override
    public DistributedLock spinLock(String name) {
        LockKeys keys = keys(name);
        return new LockEngine(this, keys, driver(name, "spin", true), spinPolicy);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        keys(name);
        throw new UnsupportedOperationException("read-write locks are not available on "
                + gateway.dialect().product() + " yet: the lease table has one owner per name; use getLock, "
                + "or a read-write lock on Redis");
    }

    @Override
    public LockInfo lockInfo(String name) {
        keys(name);
        checkOpen();
        Dialect.Row row = Futures.await(gateway.submit("read lock '" + name + "'", (c, d) -> d.read(c, name)),
                "read lock '" + name + "'");
        if (row == null) {
            return new LockInfo(name, Map.of(), -2, 0, Map.of(), LockInfo.Kind.NONE);
        }
        Map<String, ClientInfo> clients =
                row.owner().startsWith(clientId() + ":") ? Map.of(clientId(), self()) : Map.of();
        return new LockInfo(name, Map.of(row.owner(), (long) row.holds()), row.ttlMillis(), 0, clients,
                LockInfo.Kind.REENTRANT);
    }

    @Override
    public boolean forceUnlock(String name) {
        keys(name);
        checkOpen();
        return Futures.await(driver(name, "reentrant", true).forceRelease(), "force-unlock lock '" + name + "'") > 0;
    }

    @Override
    public boolean isConnected() {
        return gateway.isReachable() && (listening == null || listening.isConnected());
    }

    @Override
    public Watchdog watchdog() {
        return watchdog;
    }

    @Override
    protected ClientLife life() {
        return life;
    }

    @Override
    public JdbcGateway gateway() {
        return gateway;
    }

    @Override
    public UnlockChannels channels() {
        return channels;
    }

    @Override
    public CompletableFuture<Long> ttl(String key) {
        return gateway.submit("read lock '" + key + "'", (c, d) -> {
            Dialect.Row row = d.read(c, key);
            return row == null ? -2L : row.ttlMillis();
        });
    }

    @Override
    public String target() {
        return gateway.dialect().product() + " at " + gateway.target();
    }
}
