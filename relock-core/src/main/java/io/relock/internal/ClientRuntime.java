package io.relock.internal;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.relock.ClientInfo;
import io.relock.HeldLock;
import io.relock.LockInfo;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.RelockConfig;
import io.relock.internal.engine.Acquisition;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.lease.Hold;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.redis.LockKeys;
import io.relock.internal.redis.PubSubChannels;
import io.relock.internal.redis.RedisGateway;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Observers;
import io.relock.internal.types.DriverClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one {@code Relock} client owns: the Lettuce resources (two I/O threads, at most
 * two workers), one timer thread shared by Lettuce's timeouts, the waits and the watchdog, the two
 * connections, the unlock channels, the holds, and the lock-lost listeners.
 */
public final class ClientRuntime extends DriverClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClientRuntime.class);

    /** How long the shutdown hook waits for the connections and threads to close, at its end. */
    public static final long SHUTDOWN_CLOSE_MILLIS = 500;
    /** How long the shutdown hook waits for its releases and yields (see {@link #releaseAndClose()}). */
    public static final long SHUTDOWN_RELEASE_MILLIS = RelockConfig.SHUTDOWN_TIMEOUT.toMillis() - SHUTDOWN_CLOSE_MILLIS;

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
    private final List<LockListener> listeners = new CopyOnWriteArrayList<>();
    private final Set<Acquisition> waiting = ConcurrentHashMap.newKeySet();
    private final Set<Closing> elections = ConcurrentHashMap.newKeySet();
    /** Won once, by the first of {@link #close()} and {@link #releaseAndClose()}: that one closes. */
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Counted down when the connections and threads are gone. */
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    /** Set by {@link #releaseAndClose()}: no acquire may start, releases still run. */
    private volatile boolean stopping;
    private volatile boolean closed;

    /** A leader election of this client, as {@link #releaseAndClose()} closes it: without waiting. */
    public interface Closing {
        /** Closes (yields leadership); completes, never exceptionally, once the release is answered. */
        CompletableFuture<Void> closeAsync();
    }

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
        this.watchdog = new Watchdog(gateway, timer, nanoTime, watchdogMillis, this::lost, observers,
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
    public RedisGateway.Budget budget(long waitDeadlineNanos) {
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
    public RedisGateway.Budget budget() {
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
        if (closed) {
            throw Exceptions.closed();
        }
    }

    @Override
    public void addListener(LockListener listener) {
        listeners.add(Args.notNull(listener, "listener"));
    }

    @Override
    public boolean removeListener(LockListener listener) {
        return listeners.remove(Args.notNull(listener, "listener"));
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
        waiting.add(acquisition);
        if (closed || stopping) {
            acquisition.abort(Exceptions.closed());
        }
    }

    /** Tracks a started leader election, for {@link #releaseAndClose()}. */
    public void addElection(Closing election) {
        elections.add(election);
    }

    /** Forgets a closed leader election. */
    public void removeElection(Closing election) {
        elections.remove(election);
    }

    @Override
    public void unregister(Acquisition acquisition) {
        waiting.remove(acquisition);
    }

    private void lost(Hold hold, Throwable cause) {
        LockLostEvent event = new LockLostEvent(hold.lock.getName(), hold.owner, cause);
        LOG.warn("lock '{}' of owner {} was lost{}", event.lockName(), hold.field,
                cause == null ? " (renewal found it gone)" : ": " + cause);
        if (observers.any()) {
            observers.lost(event);
        }
        publishLost(event);
        hold.lock.holdLost();
    }

    /** Tells every listener, on a worker thread: listener code may block, the timer and I/O threads must not. */
    public void publishLost(LockLostEvent event) {
        resources.eventExecutorGroup().execute(() -> {
            for (LockListener listener : listeners) {
                try {
                    listener.onLockLost(event);
                } catch (RuntimeException e) {
                    LOG.error("LockListener {} failed for lock '{}'", listener, event.lockName(), e);
                }
            }
        });
    }

    /** Reads holders, lease and subscribers of one lock in one pipelined batch. */
    public LockInfo lockInfo(String name) {
        Args.lockName(name);
        checkOpen();
        return LockInspection.read(gateway, registry, name, key(name));
    }

    /**
     * Stops the watchdog, fails pending waits with {@link IllegalStateException}, and closes the
     * connections and threads. Locks still held stay on Redis until their leases run out. When
     * {@link #releaseAndClose()} runs already, waits (bounded) until it is done.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            awaitClosed();
            return;
        }
        closeNow(config.commandTimeout().toMillis() + 100, 2000, 3000);
    }

    /**
     * What the JVM shutdown hook does (see {@code RelockConfig.releaseOnShutdown}): refuses new
     * acquires, ends the waits, closes this client's leader elections (each yields), then releases
     * every hold of every owner, owner-checked, each once, as {@code unlock()} would; waits for
     * all of it at most {@link #SHUTDOWN_RELEASE_MILLIS}, then closes the client within
     * {@link #SHUTDOWN_CLOSE_MILLIS}. Logs what it did; never throws. Does nothing if the
     * client is closing or closed already.
     */
    public void releaseAndClose() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        long deadline = nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_RELEASE_MILLIS);
        try {
            stopping = true;
            for (Acquisition acquisition : List.copyOf(waiting)) {
                acquisition.abort(Exceptions.closed());
            }
            CompletableFuture<?> deregistered = registry.deregister();
            List<CompletableFuture<Void>> yields = new java.util.ArrayList<>();
            for (Closing election : List.copyOf(elections)) {
                yields.add(election.closeAsync());
            }
            // Elections first: each releases its own hold, which must not be released twice.
            awaitUntil(CompletableFuture.allOf(yields.toArray(CompletableFuture[]::new)), deadline);
            HoldRelease holds = HoldRelease.start(watchdog);
            boolean done = awaitUntil(CompletableFuture.allOf(holds.done(),
                    deregistered.handle((ignored, error) -> null)), deadline);
            Map<String, Long> released = holds.released();
            List<String> failed = holds.failed();
            if (failed.isEmpty() && done) {
                LOG.info("JVM shutdown: Relock client {} yielded {} leader election(s) and released {} lock(s) {}",
                        clientId, yields.size(), released.size(), released.keySet());
            } else {
                LOG.warn("JVM shutdown: Relock client {} yielded {} leader election(s), released {} lock(s) {}; could "
                        + "not release {}{}: those stay held until their leases run out (at most {})", clientId,
                        yields.size(), released.size(), released.keySet(), failed,
                        done ? "" : " and what was unanswered after " + SHUTDOWN_RELEASE_MILLIS + " ms",
                        config.watchdogTimeout());
            }
        } catch (RuntimeException e) {
            LOG.warn("JVM shutdown: Relock client {} could not release what it holds; its locks stay held until "
                    + "their leases run out", clientId, e);
        } finally {
            try {
                closeNow(0, SHUTDOWN_CLOSE_MILLIS, SHUTDOWN_CLOSE_MILLIS);
            } catch (RuntimeException e) {
                LOG.warn("JVM shutdown: Relock client {} did not close cleanly", clientId, e);
            }
        }
    }

    /** Waits for {@code future} until {@code deadlineNanos}; whether it completed. Keeps an interrupt. */
    private boolean awaitUntil(CompletableFuture<?> future, long deadlineNanos) {
        try {
            future.get(Math.max(0, deadlineNanos - nanoTime()), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** Bounded: a close that never ends must not hang the caller's close() for good. */
    private void awaitClosed() {
        try {
            if (!closedLatch.await(SHUTDOWN_RELEASE_MILLIS + config.commandTimeout().toMillis() + 3100,
                    TimeUnit.MILLISECONDS)) {
                LOG.warn("Relock client {}: close() returns while another close is still under way", clientId);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Closes: {@code deregisterMillis} for the registry entry (0: do not wait; it expires by
     * itself), then the connections, then the threads: told to stop within {@code stopMillis},
     * waited for at most {@code threadsMillis}.
     */
    private void closeNow(long deregisterMillis, long stopMillis, long threadsMillis) {
        closed = true;
        watchdog.stop();
        for (Acquisition acquisition : List.copyOf(waiting)) {
            acquisition.abort(Exceptions.closed());
        }
        if (deregisterMillis > 0) {
            try {
                registry.deregister().get(deregisterMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // Closing goes on: the entry expires a watchdog timeout after the last refresh.
                LOG.debug("could not remove client {} from the registry: {}", clientId,
                        Exceptions.unwrap(e).toString());
            }
        }
        try {
            gateway.close();
        } finally {
            try {
                // Waited for, so that close() returning means the client's threads are gone.
                resources.shutdown(0, stopMillis, TimeUnit.MILLISECONDS)
                        .awaitUninterruptibly(threadsMillis, TimeUnit.MILLISECONDS);
                timer.stop();
            } finally {
                closedLatch.countDown();
            }
        }
    }
}
