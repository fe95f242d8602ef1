package io.relock.internal;

import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.RelockConfig;
import io.relock.internal.engine.Acquisition;
import io.relock.internal.lease.Hold;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Observers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every client does the same on any back end: its lock-lost listeners, the waits and leader
 * elections to end when it closes, and the two ways it ends: {@link #close()} and the JVM
 * shutdown hook's {@link #releaseAndClose()}. The back end brings its connections and threads
 * as {@link Resources}.
 */
public final class ClientLife {

    private static final Logger LOG = LoggerFactory.getLogger(ClientLife.class);

    /** How long the shutdown hook waits for the connections and threads to close, at its end. */
    public static final long SHUTDOWN_CLOSE_MILLIS = 500;
    /** How long the shutdown hook waits for its releases and yields (see {@link #releaseAndClose()}). */
    public static final long SHUTDOWN_RELEASE_MILLIS = RelockConfig.SHUTDOWN_TIMEOUT.toMillis() - SHUTDOWN_CLOSE_MILLIS;

    /** What a back end's client owns and closes. */
    public interface Resources {

        /** The client's holds. */
        Watchdog watchdog();

        /** Removes the client's registry entry where the back end keeps one; never completes exceptionally. */
        CompletableFuture<?> deregister();

        /** Closes the connections. */
        void closeConnections();

        /** Stops the client's threads: told to stop within {@code stopMillis}, waited for at most {@code waitMillis}. */
        void stopThreads(long stopMillis, long waitMillis);
    }

    private final String clientId;
    private final RelockConfig config;
    private final LongSupplier nanoTime;
    private final Observers observers;
    private final Executor listenerExecutor;
    /** Losses published whose listeners have not all been called yet. */
    private final AtomicInteger lossesBeingTold = new AtomicInteger();
    private final Queue<Runnable> afterTold = new ConcurrentLinkedQueue<>();
    private final Resources resources;
    private final List<LockListener> listeners = new CopyOnWriteArrayList<>();
    private final Set<Acquisition> waiting = ConcurrentHashMap.newKeySet();
    private final Set<Client.Closing> elections = ConcurrentHashMap.newKeySet();
    /** Won once, by the first of {@link #close()} and {@link #releaseAndClose()}: that one closes. */
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Counted down when the connections and threads are gone. */
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    /** Set by {@link #releaseAndClose()}: no acquire may start, releases still run. */
    private volatile boolean stopping;
    private volatile boolean closed;

    /**
     * @param listenerExecutor where lock listeners run: they may block, the I/O and timer threads must not
     */
    public ClientLife(String clientId, RelockConfig config, LongSupplier nanoTime, Observers observers,
            Executor listenerExecutor, Resources resources) {
        this.clientId = clientId;
        this.config = config;
        this.nanoTime = nanoTime;
        this.observers = observers;
        this.listenerExecutor = listenerExecutor;
        this.resources = resources;
    }

    /** Fails once the client is closed. */
    public void checkOpen() {
        if (closed) {
            throw Exceptions.closed();
        }
    }

    public void addListener(LockListener listener) {
        listeners.add(Args.notNull(listener, "listener"));
    }

    public boolean removeListener(LockListener listener) {
        return listeners.remove(Args.notNull(listener, "listener"));
    }

    /** A wait starts: aborted at once if the client is closing. */
    public void register(Acquisition acquisition) {
        waiting.add(acquisition);
        if (closed || stopping) {
            acquisition.abort(Exceptions.closed());
        }
    }

    public void unregister(Acquisition acquisition) {
        waiting.remove(acquisition);
    }

    public void addElection(Client.Closing election) {
        elections.add(election);
    }

    public void removeElection(Client.Closing election) {
        elections.remove(election);
    }

    /** The watchdog found {@code hold} lost: logs it, tells the observers and listeners. */
    public void lost(Hold hold, Throwable cause) {
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
        lossesBeingTold.incrementAndGet();
        try {
            listenerExecutor.execute(() -> {
                try {
                    for (LockListener listener : listeners) {
                        try {
                            listener.onLockLost(event);
                        } catch (RuntimeException e) {
                            LOG.error("LockListener {} failed for lock '{}'", listener, event.lockName(), e);
                        }
                    }
                } finally {
                    lossTold();
                }
            });
        } catch (RejectedExecutionException e) {
            // Closed: nobody is told any more.
            lossTold();
        }
    }

    /**
     * Runs {@code action} once the listeners have been told of every loss published so far (at
     * once if none is being told), on the thread that told the last: a store that would free
     * what a lost hold left (ZooKeeper's nodes) lets no other client in before the holder heard.
     */
    public void afterLossesTold(Runnable action) {
        afterTold.add(action);
        if (lossesBeingTold.get() == 0) {
            runAfterTold();
        }
    }

    private void lossTold() {
        if (lossesBeingTold.decrementAndGet() == 0) {
            runAfterTold();
        }
    }

    private void runAfterTold() {
        for (Runnable action = afterTold.poll(); action != null; action = afterTold.poll()) {
            try {
                action.run();
            } catch (RuntimeException e) {
                LOG.warn("an action after the loss listeners failed", e);
            }
        }
    }

    /**
     * Stops the watchdog, fails pending waits with {@link IllegalStateException}, and closes the
     * connections and threads. Locks still held stay until their leases run out. When
     * {@link #releaseAndClose()} runs already, waits (bounded) until it is done.
     */
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
        long deadline = nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_RELEASE_MILLIS);
        try {
            stopping = true;
            for (Acquisition acquisition : List.copyOf(waiting)) {
                acquisition.abort(Exceptions.closed());
            }
            CompletableFuture<?> deregistered = resources.deregister();
            List<CompletableFuture<Void>> yields = new ArrayList<>();
            for (Client.Closing election : List.copyOf(elections)) {
                yields.add(election.closeAsync());
            }
            // Elections first: each releases its own hold, which must not be released twice.
            awaitUntil(CompletableFuture.allOf(yields.toArray(CompletableFuture[]::new)), deadline);
            HoldRelease holds = HoldRelease.start(resources.watchdog());
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
            future.get(Math.max(0, deadlineNanos - nanoTime.getAsLong()), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return true;
        } catch (TimeoutException e) {
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
        resources.watchdog().stop();
        for (Acquisition acquisition : List.copyOf(waiting)) {
            acquisition.abort(Exceptions.closed());
        }
        if (deregisterMillis > 0) {
            try {
                resources.deregister().get(deregisterMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // Closing goes on: the entry expires a watchdog timeout after the last refresh.
                LOG.debug("could not remove client {} from the registry: {}", clientId,
                        Exceptions.unwrap(e).toString());
            }
        }
        try {
            resources.closeConnections();
        } finally {
            try {
                // Waited for, so that close() returning means the client's threads are gone.
                resources.stopThreads(stopMillis, threadsMillis);
            } finally {
                closedLatch.countDown();
            }
        }
    }
}
