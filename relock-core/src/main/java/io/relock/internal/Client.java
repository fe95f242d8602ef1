package io.relock.internal;

import io.relock.ClientInfo;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.FencedLock;
import io.relock.HeldLock;
import io.relock.ListenerRegistration;
import io.relock.LockInfo;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.RelockConfig;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One client on one back end, as {@code Relock} and the layers above this package use it: the
 * locks of each type, inspection, listeners and observers, and its end. {@link ClientRuntime}
 * is the Redis one; a back end in another module brings its own. {@code Relock} checks names and
 * that the client is open before it asks.
 */
public interface Client {

    /** A leader election of a client, as {@link #releaseAndClose()} closes it: without waiting. */
    interface Closing {
        /** Closes (yields leadership); completes, never exceptionally, once the release is answered. */
        CompletableFuture<Void> closeAsync();
    }

    /** A reentrant lock; waits for a release without polling where the back end can tell. */
    DistributedLock reentrantLock(String name);

    /**
     * A lock that serves its waiters in arrival order.
     *
     * @throws UnsupportedOperationException if the back end cannot keep that order
     */
    DistributedLock fairLock(String name);

    /** A reentrant lock whose every hold carries a token that only grows. */
    FencedLock fencedLock(String name);

    /** A lock that is not reentrant. */
    DistributedLock simpleLock(String name);

    /** A reentrant lock whose waiters retry with backoff instead of waiting for a message. */
    DistributedLock spinLock(String name);

    /**
     * A read-write lock.
     *
     * @throws UnsupportedOperationException if the back end has none
     */
    DistributedReadWriteLock readWriteLock(String name);

    /** What the back end has under {@code name} now. */
    LockInfo lockInfo(String name);

    /** Removes the lock under {@code name} whoever holds it; true if there was one. */
    boolean forceUnlock(String name);

    /** The locks this client holds now, from its own records. */
    List<HeldLock> heldLocks();

    /** Whether the client reaches its back end now. */
    boolean isConnected();

    /** Where this client runs. */
    ClientInfo self();

    String clientId();

    RelockConfig config();

    void addListener(LockListener listener);

    boolean removeListener(LockListener listener);

    void addObserver(LockObserver observer);

    boolean removeObserver(LockObserver observer);

    /** Tells every lock listener of {@code event}, off the caller's thread. */
    void publishLost(LockLostEvent event);

    /** See {@code LockClient.addLostListener}. */
    ListenerRegistration addLostListener(String lockName, long owner, LockListener listener);

    /** Fails once the client is closed. */
    void checkOpen();

    /** How many holds this client tracks (held, or lost and not yet unlocked). */
    int trackedHolds();

    /** Worker threads that may run user code and schedule. */
    ScheduledExecutorService workers();

    /** Tracks a started leader election, for {@link #releaseAndClose()}. */
    void addElection(Closing election);

    /** Forgets a closed leader election. */
    void removeElection(Closing election);

    /** Ends the waits, closes the connections and threads; held locks stay until their leases end. */
    void close();

    /** What the JVM shutdown hook does: releases every hold, then closes; never throws. */
    void releaseAndClose();
}
