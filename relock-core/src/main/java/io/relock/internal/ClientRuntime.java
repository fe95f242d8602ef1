package io.relock.internal;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.relock.ClientInfo;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.FencedLock;
import io.relock.HeldLock;
import io.relock.LockInfo;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.RelockConfig;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.Acquisition;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.redis.PubSubChannels;
import io.relock.internal.redis.RedisGateway;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Observers;
import io.relock.internal.types.DriverClient;
import io.relock.internal.types.LockTypes;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one {@code Relock} client owns: the Lettuce resources (two I/O threads, at most
 * two workers), one timer thread shared by Lettuce's timeouts, the waits and the watchdog, the two
 * connections, the unlock channels, the holds, and the lock-lost listeners.
 */
public final class ClientRuntime extends DriverClient implements Client, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClientRuntime.class);

    private final RelockConfig config;
    private final String clientId;
    private final HashedWheelTimer timer;
    private final ClientResources resources;
    private final RedisGateway gateway;
    private final UnlockChannels channels;
    private final Watchdog watchdog;
    private final LongSupplier nanoTime;
    private final Observers observers;
    private final ClientRegistry registry;
    private final ClientLife life;

    private ClientRuntime(RelockConfig config, String clientId, HashedWheelTimer timer, ClientResources resources,
            RedisGateway gateway, LongSupplier nanoTime) {
        this.config = config;
        this.clientId = clientId;
        this.timer = timer;
        this.resources = resources;
        this.gateway = gateway;
        this.nanoTime = nanoTime;
        PubSubChannels pubSub = new PubSubChannels(gateway);
        this.channels = new UnlockChannels(pubSub, timer, gateway.sharded());
        pubSub.listen(channels);
        gateway.onTopologyChange(channels::topologyChanged);
        this.observers = new Observers(config.observers());
        long watchdogMillis = config.watchdogTimeout().toMillis();
        this.registry = new ClientRegistry(gateway, config.keyPrefix(), clientId, watchdogMillis);
        this.life = new ClientLife(clientId, config, nanoTime, observers, resources.eventExecutorGroup(),
                new ClientLife.Resources() {
                    @Override
                    public Watchdog watchdog() {
                        return watchdog;
                    }

                    @Override
                    public CompletableFuture<?> deregister() {
                        return registry.deregister();
                    }

                    @Override
                    public void closeConnections() {
                        gateway.close();
                    }

                    @Override
                    public void stopThreads(long stopMillis, long waitMillis) {
                        resources.shutdown(0, stopMillis, TimeUnit.MILLISECONDS)
                                .awaitUninterruptibly(waitMillis, TimeUnit.MILLISECONDS);
                        timer.stop();
                    }
                });
        this.watchdog = new Watchdog(gateway, timer, nanoTime, watchdogMillis, life::lost, observers,
                registry::refresh);
    }

    /**
     * Connects to Redis and starts the watchdog.
     *
     * @throws io.relock.RelockConnectionException if Redis cannot be reached
     */
    public static ClientRuntime start(RelockConfig config) {
        return start(config, System::nanoTime);
    }

    /** {@link #start(RelockConfig)} with another monotonic clock for every deadline, lease and tick of the client. */
    public static ClientRuntime start(RelockConfig config, LongSupplier nanoTime) {
        Args.notNull(config, "config");
        String clientId = UUID.randomUUID().toString();
        // 10 ms ticks: fine enough for wait deadlines, coarse enough to cost nothing when idle.
        HashedWheelTimer timer = new HashedWheelTimer(new DefaultThreadFactory("relock-timer", true),
                10, TimeUnit.MILLISECONDS);
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2) // Lettuce's minimum; started only when needed
                .timer(timer)
                // Lettuce's default backs off to 30 s; a lock client should find a restarted server or a
                // promoted master fast (a Sentinel client asks the Sentinels at each attempt).
                .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(250), 2, TimeUnit.MILLISECONDS))
                .build();
        try {
            RedisGateway gateway = config.connectInBackground()
                    ? RedisGateway.connectInBackground(config, resources, clientId, nanoTime)
                    : RedisGateway.connect(config, resources, clientId, nanoTime);
            ClientRuntime runtime = new ClientRuntime(config, clientId, timer, resources, gateway, nanoTime);
            if (config.connectInBackground()) {
                // Not waited for: create() must not wait for a server that may be down.
                gateway.whenConnected(pubSub -> runtime.registry.register());
            } else {
                runtime.register();
            }
            runtime.watchdog.start();
            LOG.debug("Relock client {} connected to {}", clientId, gateway.target());
            return runtime;
        } catch (RuntimeException e) {
            resources.shutdown(0, 0, TimeUnit.MILLISECONDS);
            timer.stop();
            throw e;
        }
    }

    /**
     * Writes this client's registry entry before {@code create} returns, so inspectors see it
     * from the first lock on; a failure is logged by the registry and costs only the entry.
     */
    private void register() {
        try {
            registry.register().get(config.commandTimeout().toMillis() + 100, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.debug("client {} starts without its registry entry: {}", clientId, Exceptions.unwrap(e).toString());
        }
    }

    @Override
    public RelockConfig config() {
        return config;
    }

    public String clientId() {
        return clientId;
    }

    @Override
    public RedisGateway gateway() {
        return gateway;
    }

    @Override
    public Budget budget(long waitDeadlineNanos) {
        return gateway.budget(waitDeadlineNanos);
    }

    @Override
    public UnlockChannels channels() {
        return channels;
    }

    @Override
    public Watchdog watchdog() {
        return watchdog;
    }

    @Override
    public Observers observers() {
        return observers;
    }

    @Override
    public io.netty.util.Timer timer() {
        return timer;
    }

    @Override
    public long nanoTime() {
        return nanoTime.getAsLong();
    }

    @Override
    public java.util.concurrent.Executor executor() {
        return resources.eventExecutorGroup();
    }

    /** The client's worker threads (Lettuce's event executors), which also schedule. */
    public java.util.concurrent.ScheduledExecutorService workers() {
        return resources.eventExecutorGroup();
    }

    /** The Redis key of a lock. */
    public String key(String name) {
        return config.keyPrefix() + name;
    }

    @Override
    public LockKeys keysOf(String name, String channelPrefix) {
        return LockKeys.of(config.keyPrefix(), gateway, name, channelPrefix);
    }

    @Override
    public String field(long ownerId) {
        return clientId + ":" + ownerId;
    }

    @Override
    public long commandTimeoutMillis() {
        return config.commandTimeout().toMillis();
    }

    @Override
    public Budget budget() {
        return gateway.budget();
    }

    @Override
    public boolean replicaSync() {
        return gateway.replicaSync();
    }

    @Override
    public CompletableFuture<Long> ttl(String key) {
        return gateway.ttl(key);
    }

    @Override
    public String target() {
        return gateway.target();
    }

    @Override
    public void checkOpen() {
        life.checkOpen();
    }

    @Override
    public void addListener(LockListener listener) {
        life.addListener(listener);
    }

    @Override
    public boolean removeListener(LockListener listener) {
        return life.removeListener(listener);
    }

    public void addObserver(LockObserver observer) {
        observers.add(observer);
    }

    public boolean removeObserver(LockObserver observer) {
        return observers.remove(observer);
    }

    /** The locks this client holds now, from its own records. */
    public List<HeldLock> heldLocks() {
        return watchdog.held();
    }

    /** Whether the client's connections to Redis are up now. */
    public boolean isConnected() {
        return gateway.isConnected();
    }

    /** Where this client runs, as it registered itself on Redis. */
    public ClientInfo self() {
        return registry.self(clientId);
    }

    /** How many channels this client is subscribed to right now. */
    public int subscribedChannels() {
        return channels.subscribedChannels();
    }

    /** How many holds this client tracks (held, or lost and not yet unlocked). */
    public int trackedHolds() {
        return watchdog.size();
    }

    @Override
    public void register(Acquisition acquisition) {
        life.register(acquisition);
    }

    @Override
    public void addElection(Closing election) {
        life.addElection(election);
    }

    @Override
    public void removeElection(Closing election) {
        life.removeElection(election);
    }

    @Override
    public void unregister(Acquisition acquisition) {
        life.unregister(acquisition);
    }

    @Override
    public void publishLost(LockLostEvent event) {
        life.publishLost(event);
    }

    @Override
    public DistributedLock reentrantLock(String name) {
        return LockTypes.REENTRANT.create(this, name);
    }

    @Override
    public DistributedLock fairLock(String name) {
        return LockTypes.FAIR.create(this, name);
    }

    @Override
    public FencedLock fencedLock(String name) {
        return LockTypes.FENCED.create(this, name);
    }

    @Override
    public DistributedLock simpleLock(String name) {
        return LockTypes.SIMPLE.create(this, name);
    }

    @Override
    public DistributedLock spinLock(String name) {
        return LockTypes.SPIN.create(this, name);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return LockTypes.READ_WRITE.create(this, name);
    }

    @Override
    public boolean forceUnlock(String name) {
        return LockTypes.forceUnlock(this, name, lockInfo(name).kind());
    }

    /** Reads holders, lease and subscribers of one lock in one pipelined batch. */
    public LockInfo lockInfo(String name) {
        Args.lockName(name);
        checkOpen();
        return LockInspection.read(gateway, registry, name, key(name));
    }

    /** See {@link ClientLife#close()}. */
    @Override
    public void close() {
        life.close();
    }

    /** See {@link ClientLife#releaseAndClose()}. */
    @Override
    public void releaseAndClose() {
        life.releaseAndClose();
    }
}
