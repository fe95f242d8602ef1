package io.relock.zookeeper.internal;

import io.relock.RelockConnectionException;
import io.relock.RelockException;
import io.relock.RelockTimeoutException;
import io.relock.internal.backend.DurableGateway;
import io.relock.internal.backend.Renewal;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.KeeperException;

/**
 * How the engine's calls reach ZooKeeper: Curator's calls block (and retry a lost connection
 * within the command timeout), so they run on the caller's thread when it waits anyway, else on
 * the client's operation threads. A write is confirmed when ZooKeeper answers: a quorum has it.
 */
final class ZkGateway extends DurableGateway {

    /** ZooKeeper operations that block, run on the caller's or an operation thread. */
    interface Work<T> {
        T run() throws Exception;
    }

    /** The one renewal of every lock type: a check of the holds' nodes, nothing is written. */
    static final Renewal CHECK = new Renewal() {
        @Override
        public String toString() {
            return "zookeeper-node-check";
        }
    };

    private final ExecutorService operations;
    private final String target;
    private final AtomicLong epoch = new AtomicLong();
    private volatile ZkLocks locks;

    ZkGateway(ExecutorService operations, String target) {
        this.operations = operations;
        this.target = target;
    }

    void attach(ZkLocks locks) {
        this.locks = locks;
    }

    String target() {
        return target;
    }

    /** The connection broke or came back: a write whose epoch changed may not have been answered. */
    void connectionChanged() {
        epoch.incrementAndGet();
    }

    /**
     * Runs {@code work} on the calling thread when it is a caller blocked in the synchronous
     * API, else on an operation thread. The call runs to its end whatever the caller's interrupt
     * (a create cut short might leave a node nobody knows of); the flag is kept for the engine.
     */
    <T> CompletableFuture<T> submitOnCaller(String operation, boolean callerBlocks, Work<T> work) {
        if (!callerBlocks || onInternalThread()) {
            return submit(operation, work);
        }
        boolean interrupted = Thread.interrupted();
        try {
            return CompletableFuture.completedFuture(runNow(operation, work));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            if (interrupted || Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs {@code work} on an operation thread; {@code operation} names it in a failure. */
    <T> CompletableFuture<T> submit(String operation, Work<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            operations.execute(() -> {
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

    /** Runs {@code work} here, its failures translated. */
    <T> T runNow(String operation, Work<T> work) {
        // Curator refuses to start an operation on an interrupted thread; the caller's flag is
        // restored by submitOnCaller.
        boolean interrupted = Thread.interrupted();
        try {
            return work.run();
        } catch (RuntimeException e) {
            if (e instanceof RelockException || e instanceof IllegalMonitorStateException
                    || e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
                throw e;
            }
            throw translate(operation, e);
        } catch (Exception e) {
            throw translate(operation, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    RelockException translate(String operation, Throwable e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new RelockException("interrupted while waiting for ZooKeeper: " + operation, e);
        }
        if (e instanceof KeeperException.OperationTimeoutException) {
            return new RelockTimeoutException("ZooKeeper did not answer in time: " + operation + ": " + e.getMessage(), e);
        }
        if (e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.SessionMovedException) {
            return new RelockConnectionException("cannot reach ZooKeeper at " + target + ": " + operation + ": "
                    + e.getMessage(), e);
        }
        return new RelockException("ZooKeeper failed: " + operation + ": " + e, e);
    }

    @Override
    public long connectionEpoch() {
        return epoch.get();
    }

    /** Checks the holds' nodes (see {@link ZkLocks#check}): 1 still held, 0 gone, 2 force-unlocked. */
    @Override
    public CompletableFuture<List<Object>> renew(Renewal renewal, String[] keys, String[] args) {
        return locks.check(keys, args);
    }
}
