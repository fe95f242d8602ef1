package io.relock.internal;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.relock.ClientInfo;
import io.relock.HeldLock;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.RelockConfig;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.ChannelCommands;
import io.relock.internal.backend.DurableGateway;
import io.relock.internal.engine.Acquisition;
import io.relock.internal.engine.LockClient;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.support.Observers;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a client on a store other than Redis (a database, ZooKeeper) shares with the others: its
 * identity and settings, its life (listeners, elections, acquisitions in flight, the close),
 * and the engine's view of its time and budgets. A subclass brings the store: its gateway and
 * threads, the lock types, and what reading or force-unlocking a lock means there.
 */
public abstract class StoreClient extends LockClient implements Client {

    /** Waiters subscribe to nothing on these stores: the client wakes them itself when a lock may be free. */
    protected static final ChannelCommands NOTHING_TO_SUBSCRIBE = new ChannelCommands() {
        @Override
        public CompletableFuture<Void> subscribe(String channel) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> unsubscribe(String channel) {
            return CompletableFuture.completedFuture(null);
        }
    };

    private final String clientId = UUID.randomUUID().toString();
    private final Instant startedAt = Instant.now();
    private final RelockConfig config;
    private final Observers observers;
    private final HashedWheelTimer timer;
    private final ExecutorService calls;
    private final ScheduledExecutorService workers;

    /**
     * @param threads the prefix of the client's thread names, like {@code relock-jdbc}
     * @param callsName what the threads that run the store's blocking calls are named after it
     * @param callThreads how many of those
     */
    protected StoreClient(RelockConfig config, String threads, String callsName, int callThreads) {
        this.config = config;
        this.observers = new Observers(config.observers());
        this.timer = new HashedWheelTimer(DurableGateway.internal(new DefaultThreadFactory(threads + "-timer", true)),
                10, TimeUnit.MILLISECONDS);
        this.calls = Executors.newFixedThreadPool(callThreads, blocking(threads + "-" + callsName));
        // Two: listeners and elections; the store's calls have threads of their own.
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(2, blocking(threads + "-worker"));
        pool.setRemoveOnCancelPolicy(true);
        this.workers = pool;
    }

    /**
     * Plain daemon threads, marked as the client's own: they block in the store's calls and in
     * listeners, so they must not be Netty's, which BlockHound's Netty integration takes for
     * event loops that may never block.
     */
    private static ThreadFactory blocking(String name) {
        AtomicInteger next = new AtomicInteger();
        return DurableGateway.internal(task -> {
            Thread thread = new Thread(task, name + "-" + next.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * The client's life, for its constructor: listeners on the client's workers, no registry
     * entry to remove, and at close {@code closeConnections} (what the store opened), then the
     * threads.
     */
    protected final ClientLife newLife(Runnable closeConnections) {
        return new ClientLife(clientId, config, this::nanoTime, observers, workers, new ClientLife.Resources() {
            @Override
            public Watchdog watchdog() {
                return StoreClient.this.watchdog();
            }

            @Override
            public CompletableFuture<?> deregister() {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void closeConnections() {
                closeConnections.run();
            }

            @Override
            public void stopThreads(long stopMillis, long waitMillis) {
                shutDownThreads(waitMillis);
            }
        });
    }

    /** The threads that run the store's blocking calls. */
    protected final ExecutorService calls() {
        return calls;
    }

    /** Stops the client's threads, waiting up to {@code waitMillis} for calls under way. */
    protected final void shutDownThreads(long waitMillis) {
        calls.shutdown();
        workers.shutdown();
        try {
            calls.awaitTermination(waitMillis, TimeUnit.MILLISECONDS);
            workers.awaitTermination(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            calls.shutdownNow();
            workers.shutdownNow();
            timer.stop();
        }
    }

    /** The client's life: listeners, elections, acquisitions in flight, and the close. */
    protected abstract ClientLife life();

    @Override
    public List<HeldLock> heldLocks() {
        return watchdog().held();
    }

    @Override
    public ClientInfo self() {
        return Clients.thisProcess(clientId, startedAt);
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public RelockConfig config() {
        return config;
    }

    @Override
    public void addListener(LockListener listener) {
        life().addListener(listener);
    }

    @Override
    public boolean removeListener(LockListener listener) {
        return life().removeListener(listener);
    }

    @Override
    public void addObserver(LockObserver observer) {
        observers.add(observer);
    }

    @Override
    public boolean removeObserver(LockObserver observer) {
        return observers.remove(observer);
    }

    @Override
    public void publishLost(LockLostEvent event) {
        life().publishLost(event);
    }

    @Override
    public void checkOpen() {
        life().checkOpen();
    }

    @Override
    public int trackedHolds() {
        return watchdog().size();
    }

    @Override
    public void addElection(Closing election) {
        life().addElection(election);
    }

    @Override
    public void removeElection(Closing election) {
        life().removeElection(election);
    }

    @Override
    public void close() {
        life().close();
    }

    @Override
    public void releaseAndClose() {
        life().releaseAndClose();
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Observers observers() {
        return observers;
    }

    /** A waiting call's store calls get the command timeout each; the wait's own deadline bounds the waiting. */
    @Override
    public Budget budget(long waitDeadlineNanos) {
        long end = Math.max(waitDeadlineNanos, nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis()));
        return new Budget(end, end);
    }

    @Override
    public Budget budget() {
        long end = nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis());
        return new Budget(end, end);
    }

    @Override
    public Executor executor() {
        return workers;
    }

    @Override
    public ScheduledExecutorService workers() {
        return workers;
    }

    @Override
    public Timer timer() {
        return timer;
    }

    @Override
    public void register(Acquisition acquisition) {
        life().register(acquisition);
    }

    @Override
    public void unregister(Acquisition acquisition) {
        life().unregister(acquisition);
    }

    @Override
    public String field(long ownerId) {
        return clientId + ":" + ownerId;
    }

    @Override
    public long commandTimeoutMillis() {
        return config.commandTimeout().toMillis();
    }

    /** No replicas to wait for: a store's answer is the write. */
    @Override
    public boolean replicaSync() {
        return false;
    }
}
