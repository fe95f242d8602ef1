package io.relock.zookeeper.internal;

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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Relock client on ZooKeeper: the engine and the lock types of the Redis client over
 * ephemeral sequential nodes ({@link ZkLocks}). The watchdog renews nothing (the session is the
 * lease); its ticks check that the holds' nodes are still there. Its threads: the operation
 * threads (Curator's calls block), two workers for listeners and elections, the timer, and
 * Curator's own.
 */
public final class ZkClient extends StoreClient {
    private static final Logger LOG = LoggerFactory.getLogger(ZkClient.class);

    /** The longest a lock's name may be, in characters. */
    public static final int MAX_NAME_LENGTH = 1024;

    /**
     * What {@code RelockZooKeeper.Builder} settled.
     *
     * @param curator a started Curator client
     * @param ownsCurator whether closing this client closes it
     * @param root the path under which the locks' nodes are
     */
    public record Settings(CuratorFramework curator, boolean ownsCurator, String root, RelockConfig config,
            int operationThreads) {}

    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final ZkGateway gateway;
    private final ZkLocks locks;
    private final UnlockChannels channels;
    private final Watchdog watchdog;
    private final ClientLife life;
    private final ConnectionStateListener stateListener;

    private ZkClient(Settings settings) {
        super(settings.config(), "relock-zk", "operation", settings.operationThreads());
        this.curator = settings.curator();
        this.ownsCurator = settings.ownsCurator();
        this.gateway = new ZkGateway(calls(), curator.getZookeeperClient().getCurrentConnectionString());
        this.channels = new UnlockChannels(NOTHING_TO_SUBSCRIBE, timer(), false);
        this.locks = new ZkLocks(curator, settings.root(), gateway, channels, timer(), this::watchdog,
                this::afterLossesTold, commandTimeoutMillis());
        gateway.attach(locks);
        this.life = newLife(this::closeConnections);
        this.watchdog = new Watchdog(gateway, timer(), this::nanoTime, config().watchdogTimeout().toMillis(),
                life::lost, observers(), () -> { });
        this.stateListener = (client, state) -> locks.stateChanged(state);
    }

    private void closeConnections() {
        curator.getConnectionStateListenable().removeListener(stateListener);
        if (ownsCurator) {
            // The session ends, and every node of this client with it.
            curator.close();
        } else {
            locks.deleteAll();
        }
    }

    /**
     * Waits for the connection, and starts the watchdog.
     *
     * @throws io.relock.RelockConnectionException if ZooKeeper cannot be reached within the command timeout
     */
    public static ZkClient start(Settings settings) {
        ZkClient client = new ZkClient(settings);
        try {
            if (!settings.curator().blockUntilConnected((int) settings.config().commandTimeout().toMillis(),
                    TimeUnit.MILLISECONDS)) {
                throw new io.relock.RelockConnectionException("cannot reach ZooKeeper at " + client.gateway.target()
                        + " within " + settings.config().commandTimeout().toMillis() + " ms", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.shutDownThreads(1000);
            throw new io.relock.RelockException("interrupted while connecting to ZooKeeper", e);
        } catch (RuntimeException e) {
            client.shutDownThreads(1000);
            if (settings.ownsCurator()) {
                settings.curator().close();
            }
            throw e;
        }
        settings.curator().getConnectionStateListenable().addListener(client.stateListener);
        client.watchdog.start();
        LOG.debug("Relock client {} on ZooKeeper at {}, root {}", client.clientId(), client.gateway.target(),
                settings.root());
        return client;
    }

    /**
     * Runs {@code action} once the loss listeners have been called, or a command timeout from
     * now if one of them blocks that long (the nodes must not wait on a listener forever).
     */
    private void afterLossesTold(Runnable action) {
        AtomicBoolean ran = new AtomicBoolean();
        Runnable once = () -> {
            if (ran.compareAndSet(false, true)) {
                action.run();
            }
        };
        timer().newTimeout(timeout -> once.run(), commandTimeoutMillis(), TimeUnit.MILLISECONDS);
        life.afterLossesTold(once);
    }

    /** The node under which the holds and waiters of lock {@code name} are, below {@code root}. */
    public static String lockPath(String root, String name) {
        return root + "/" + ZkLocks.encode(name);
    }

    /** The Curator client this one runs on. */
    public CuratorFramework curator() {
        return curator;
    }

    /** The nodes this client keeps (holds and waiters). */
    public int nodes() {
        return locks.size();
    }

    private LockKeys keys(String name) {
        Args.lockName(name);
        int length = name.codePointCount(0, name.length());
        Args.require(length <= MAX_NAME_LENGTH, "name is %d characters long; at most %d fit a ZooKeeper path here",
                length, MAX_NAME_LENGTH);
        return new LockKeys(name, name, name);
    }

    private ZkDriver driver(String name, String type, String mode, boolean reentrant) {
        return new ZkDriver(gateway, locks, name, type, mode, reentrant);
    }

    @Override
    public DistributedLock reentrantLock(String name) {
        return new LockEngine(this, keys(name), driver(name, "reentrant", ZkLocks.LOCK, true), WaitPolicy.PUB_SUB);
    }

    /** Every lock here is fair: waiters are served in the order their nodes were created. */
    @Override
    public DistributedLock fairLock(String name) {
        return new LockEngine(this, keys(name), driver(name, "fair", ZkLocks.LOCK, true), WaitPolicy.PUB_SUB);
    }

    @Override
    public FencedLock fencedLock(String name) {
        return new FencedEngineLock(this, keys(name), driver(name, "fenced", ZkLocks.LOCK, true), WaitPolicy.PUB_SUB);
    }

    @Override
    public DistributedLock simpleLock(String name) {
        return new LockEngine(this, keys(name), driver(name, "simple", ZkLocks.LOCK, false), WaitPolicy.PUB_SUB);
    }

    @Override
    public DistributedLock spinLock(String name) {
        // Woken by its watch like the others: in a queue, polling would only delay each hand-off.
        return new LockEngine(this, keys(name), driver(name, "spin", ZkLocks.LOCK, true), WaitPolicy.PUB_SUB);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        LockKeys keys = keys(name);
        return new ZkReadWriteLock(name,
                new LockEngine(this, keys, driver(name, "read", ZkLocks.READ, true), WaitPolicy.PUB_SUB),
                new LockEngine(this, keys, driver(name, "write", ZkLocks.WRITE, true), WaitPolicy.PUB_SUB));
    }

    @Override
    public LockInfo lockInfo(String name) {
        keys(name);
        checkOpen();
        ZkLocks.Snapshot snapshot = Futures.await(gateway.submit("read lock '" + name + "'",
                () -> locks.snapshot(name)), "read lock '" + name + "'");
        if (snapshot.holders().isEmpty()) {
            return new LockInfo(name, Map.of(), -2, snapshot.waiters(), Map.of(), LockInfo.Kind.NONE);
        }
        boolean ours = snapshot.holders().keySet().stream().anyMatch(owner -> owner.startsWith(clientId() + ":"));
        return new LockInfo(name, snapshot.holders(), -1, snapshot.waiters(),
                ours ? Map.of(clientId(), self()) : Map.of(),
                snapshot.readWrite() ? LockInfo.Kind.READ_WRITE : LockInfo.Kind.REENTRANT);
    }

    @Override
    public boolean forceUnlock(String name) {
        keys(name);
        checkOpen();
        return Futures.await(gateway.submit("force-unlock lock '" + name + "'", () -> locks.forceRelease(name)),
                "force-unlock lock '" + name + "'") > 0;
    }

    @Override
    public boolean isConnected() {
        return curator.getZookeeperClient().isConnected();
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
    public ZkGateway gateway() {
        return gateway;
    }

    @Override
    public UnlockChannels channels() {
        return channels;
    }

    /**
     * For a lock an owner of this client holds, what is surely left of its lease: a fixed lease's
     * rest, or for a watchdog's hold the watchdog timeout from the last check that found its node.
     * For another client's hold -1 (it lasts as long as that client's session); -2 when free.
     */
    @Override
    public CompletableFuture<Long> ttl(String key) {
        long ours = watchdog.heldByOthers(key, "");
        if (ours >= 0) {
            return CompletableFuture.completedFuture(Math.max(1, ours));
        }
        return gateway.submit("read lock '" + key + "'", () -> locks.children(key).isEmpty() ? -2L : -1L);
    }

    @Override
    public String target() {
        return "ZooKeeper at " + gateway.target();
    }
}
