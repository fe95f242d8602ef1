package io.relock;

import io.relock.internal.Client;
import io.relock.internal.ClientRuntime;
import io.relock.internal.Clients;
import io.relock.internal.leader.FencedLeaderElection;
import io.relock.internal.multi.MultiRedisLock;
import io.relock.internal.multi.RedLock;
import io.relock.internal.support.Args;
import io.relock.internal.support.OwnerIds;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Relock client: the entry point for distributed locks on one Redis deployment.
 *
 * <pre>{@code
 * try (Relock relock = Relock.create(config)) {
 *     DistributedLock lock = relock.getLock("order:42");
 *     lock.lock();
 *     try {
 *         // only one thread in the whole fleet runs this at a time
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 *
 * <p>Create one client per application and share it: it is thread-safe, and it holds two Redis
 * connections (commands and pub/sub) and at most five threads (two I/O, two workers started only
 * when needed, one timer), whatever the number of locks. Each client has its own {@link #clientId()}; a lock held by
 * one client cannot be unlocked through another (except by {@code forceUnlock}).
 *
 * <p>{@link #close()} stops the watchdog and releases connections and threads. Locks still held
 * are <em>not</em> released: they stay on Redis until their leases run out (at most
 * {@link RelockConfig#watchdogTimeout()} for watchdog-renewed locks), exactly as if the process
 * had crashed. Unlock what you hold before closing.
 *
 * <p><b>When the JVM stops without {@code close()}.</b> By default
 * ({@link RelockConfig.Builder#releaseOnShutdown(boolean)}) each client registers a JVM shutdown
 * hook: on SIGTERM (a normal Kubernetes or systemd stop), {@code System.exit} or the end of
 * {@code main}, it closes the client's leader elections (each yields its leadership), releases
 * every lock the client holds (every hold of every owner, owner-checked, each once), and closes
 * the client, within {@link RelockConfig#SHUTDOWN_TIMEOUT} (2 s) even when Redis is down.
 * Other clients then get the locks and win the elections at once, not a lease later.
 * {@code close()} removes the hook. After SIGKILL ({@code kill -9}), a crash or a lost machine no
 * code runs: the locks stay held until their leases run out, at most
 * {@link RelockConfig#watchdogTimeout()} for locks taken without a lease. A client that runs
 * leader elections should therefore have a short watchdog timeout (5 s to 10 s).
 */
public final class Relock implements AutoCloseable {

    static {
        Clients.install(Relock::of, relock -> relock.runtime);
    }

    private final Client runtime;
    /** The registered shutdown hook, or null (none configured, or removed by close()). */
    private final AtomicReference<Thread> shutdownHook = new AtomicReference<>();

    private Relock(Client runtime) {
        this.runtime = runtime;
    }

    /** A Relock on {@code client}, with the shutdown hook when its settings ask for one. */
    private static Relock of(Client client) {
        Relock relock = new Relock(client);
        if (client.config().releaseOnShutdown()) {
            relock.addShutdownHook();
        }
        return relock;
    }

    /**
     * Connects to Redis as configured and starts the client: to the one server, to the master
     * the sentinels name, to the cluster's nodes, or to the master among the master/replica
     * nodes. Returns only when the connections work.
     *
     * <p>With {@link RelockConfig.Builder#connectInBackground(boolean)} it does not wait for Redis:
     * it returns at once when Redis cannot be reached, and connects in the background (see there).
     *
     * @param config the settings
     * @return a connected client (with {@code connectInBackground}, a client perhaps still connecting)
     * @throws NullPointerException if {@code config} is null
     * @throws RelockConnectionException (not with {@code connectInBackground}) if Redis is
     *     unreachable, rejects the credentials or the TLS handshake, no master is found, or
     *     replica sync is on and the server refuses {@code WAIT}; also if the server does not
     *     answer as Redis does (another service on that port), which the message says; the
     *     message names the servers, never a password, and the cause is the client's error
     */
    public static Relock create(RelockConfig config) {
        Args.notNull(config, "config");
        return of(ClientRuntime.start(config));
    }

    /** See {@link RelockConfig.Builder#releaseOnShutdown(boolean)}; the hook holds only the runtime. */
    private void addShutdownHook() {
        Client client = runtime;
        Thread hook = new Thread(client::releaseAndClose, "relock-shutdown-" + client.clientId());
        shutdownHook.set(hook);
        try {
            Runtime.getRuntime().addShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // Created while the JVM stops: nobody will use it long, and nothing will close it.
            shutdownHook.set(null);
        }
    }

    /**
     * A reentrant lock with Redisson's wire format: Relock and Redisson clients using the same
     * name exclude each other. Cheap: creates no Redis state until used.
     *
     * @param name the lock's name (the Redis key, after the configured prefix)
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public DistributedLock getLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.reentrantLock(name);
    }

    /**
     * A fair reentrant lock: waiters in every client get it in the order they first asked
     * (FIFO). A release wakes only the next waiter. A waiter whose process died is skipped after
     * {@link RelockConfig#threadWaitTime()}; deadlines use the Redis server's clock, so skewed
     * client clocks do not matter. Same hash layout as {@link #getLock(String)}, plus the keys
     * {@code {<name>}:queue} and {@code {<name>}:timeouts} ({@code <name>::queue} and
     * {@code <name>::timeouts} when the name has its own hash tag, so that {@code x} and
     * {@code {x}} stay two locks).
     *
     * @param name the lock's name
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public DistributedLock getFairLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.fairLock(name);
    }

    /**
     * A reentrant lock that hands every new holder a strictly larger fencing token, so the
     * resource it protects can reject writes from a holder that lost the lock while paused.
     * Same layout as {@link #getLock(String)} plus the never-expiring key {@code {<name>}:token}.
     *
     * @param name the lock's name
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public FencedLock getFencedLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.fencedLock(name);
    }

    /**
     * The plain lock of one key and a random token: {@code SET name token NX PX lease}, released by compare-and-delete.
     * Not reentrant: acquiring it again while holding it throws
     * {@link IllegalMonitorStateException}. Waits and renews like {@link #getLock(String)}; not
     * compatible with Redisson's locks on the same name (a different Redis type).
     *
     * @param name the lock's name
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public DistributedLock getSimpleLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.simpleLock(name);
    }

    /**
     * The reentrant lock of {@link #getLock(String)} (same layout, interoperable with it), but
     * waiting by capped exponential backoff with jitter ({@link RelockConfig#spinBackoffInitial()})
     * instead of pub/sub: no subscriptions, for very many lightly contended locks. A released lock
     * reaches its next owner later, as a waiter only notices a release at its next attempt.
     *
     * @param name the lock's name
     * @return the lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public DistributedLock getSpinLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.spinLock(name);
    }

    /**
     * A read-write lock: many readers or one writer, in Redisson's {@code RReadWriteLock} layout
     * (the two libraries interoperate on the same names). See {@link DistributedReadWriteLock}
     * for downgrade, the refused upgrade and per-reader leases.
     *
     * @param name the lock's name
     * @return the read-write lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public DistributedReadWriteLock getReadWriteLock(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return runtime.readWriteLock(name);
    }

    /**
     * All-or-nothing over several locks, which may come from different clients and servers:
     * it is held when every member is held by the calling thread. Members are acquired in one
     * global order (server, then name), so multi-locks over overlapping sets do not deadlock;
     * {@code tryLock(wait, ...)} spends one deadline over all members, and releases what it took,
     * in reverse, when it fails. A lease applies to every member; without one, each member's
     * client renews it. {@code isLocked()} is true when any member is held.
     *
     * @param locks the members, each a lock of a Relock client
     * @return the multi-lock
     * @throws NullPointerException if {@code locks} or a member is null
     * @throws IllegalArgumentException if {@code locks} is empty, has a member twice, or a member
     *     is not a Relock lock
     */
    public DistributedLock getMultiLock(DistributedLock... locks) {
        return new MultiRedisLock(locks);
    }

    /**
     * Redlock over independent Redis masters: pass one lock per master, each from its own
     * {@code Relock} client. Held when a majority (N/2+1) of the members were acquired and the
     * lease left after the time spent and a clock-drift allowance is positive; otherwise every
     * member is released again, including those whose reply came late. Members are asked at the
     * same time. {@code tryLock} returns {@code false} when other owners hold a majority, and
     * throws {@link RelockException} when too few masters answer within the command timeout (a
     * slow master is given that long, whatever the wait). {@code unlock()} (and the stage of
     * {@code unlockAsync}) returns once a majority of the members confirmed the release; the
     * other members are released in the background (a failed release is retried a few times,
     * then left to its lease), and so is what a failed acquire won. Such a late release never
     * removes another owner's hold, nor a hold the same owner took after it: that owner's next
     * acquire on a member waits for the release still under way there. When fewer than a
     * majority confirm, {@code unlock()} waits for every member and throws
     * {@link RelockException} if one failed, else {@link IllegalMonitorStateException} (fewer
     * than a majority still held it). Each
     * member's client renews its own member and reports its loss to its {@link LockListener}s;
     * when so many members are lost that no majority is left, this client's listeners are told
     * that the RedLock itself (named {@code redlock[<member names>]}) is lost.
     *
     * @param locks one lock per master, each from a different client
     * @return the RedLock
     * @throws NullPointerException if {@code locks} or a member is null
     * @throws IllegalArgumentException if {@code locks} is empty, two members share a client, or
     *     a member is not a Relock lock
     */
    public DistributedLock getRedLock(DistributedLock... locks) {
        runtime.checkOpen();
        return new RedLock(runtime, locks);
    }

    /**
     * A leader election among the clients that run for {@code name}: see {@link LeaderElection}.
     * It is the {@link #getFencedLock(String) fenced lock} of that name, held by the leader; its
     * fencing token is the leader's term. Cheap: nothing happens on Redis until
     * {@link LeaderElection#start(LeadershipListener)} or {@link LeaderElection#leader()}. Each
     * call returns a new, unstarted election; one client may run several for one name, and they
     * compete as separate candidates.
     *
     * @param name the election's name (the lock's name)
     * @return an election, not started
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws IllegalStateException if this client is closed
     */
    public LeaderElection getLeaderElection(String name) {
        Args.lockName(name);
        runtime.checkOpen();
        return new FencedLeaderElection(runtime, name, runtime.fencedLock(name));
    }

    /**
     * Reads who holds a lock, their hold counts, its remaining lease and how many clients wait
     * for it, in one round trip.
     *
     * @param name the lock's name
     * @return a snapshot
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not
     *     well-formed UTF-16 (an unpaired surrogate), or, in a Redis Cluster, has braces but no hash tag
     * @throws RelockException if Redis fails
     */
    public LockInfo getLockInfo(String name) {
        return runtime.lockInfo(name);
    }

    /**
     * The locks this client holds right now, oldest first: name, type, owner, hold count, since
     * when, and the lease left. Read from the client's own records, without a round trip; holds
     * whose lease was lost or ran out are not listed. Locks of a RedLock or multi-lock appear as
     * their members, each under its own client.
     *
     * @return a snapshot; empty when nothing is held
     */
    public List<HeldLock> heldLocks() {
        return runtime.heldLocks();
    }

    /**
     * Whether the client's connection to Redis is up now, as far as the client knows (its command
     * connection is open and no reconnect attempt failed since): for a health check. False while
     * a client made with {@link RelockConfig.Builder#connectInBackground(boolean)} has not
     * connected yet, and while the client reconnects after losing Redis. A true answer does not
     * promise that the next call succeeds.
     *
     * @return true when connected
     */
    public boolean isConnected() {
        return runtime.isConnected();
    }

    /**
     * Where this client runs, as it registers itself on Redis for lock inspectors (see
     * {@link ClientInfo} and {@link LockInfo#clients()}).
     *
     * @return this client's host, process id, start time and version
     */
    public ClientInfo clientInfo() {
        return runtime.self();
    }

    /**
     * Removes whatever lock is held under {@code name}, whoever holds it, with the release of its
     * own type, so that its waiters are woken (Relock's and Redisson's): the type is told from the
     * data as {@link LockInfo#kind()} reports it, then that type's {@code forceUnlock()} runs. For
     * operators freeing a lock whose holder is dead; a holder that is alive learns of it at its
     * next renewal ({@link LockListener}, with a {@link LockForceUnlockedException} as the cause)
     * or {@code unlock()}. If the data changes between the two steps, the removal follows the
     * type read first, and removes nothing unless the key then holds a lock of that type.
     *
     * <p>Data that no lock writes ({@link LockInfo.Kind#NOT_A_LOCK}: a cache entry, a counter
     * hash, a list) is never removed: each type's release checks what the key holds in the same
     * script that deletes it, and this method answers {@code false}.
     *
     * @param name the lock's name
     * @return {@code true} if a lock was removed; {@code false} if nothing was held under it, or
     *     the key holds data that no lock writes (left untouched; {@link #getLockInfo(String)}
     *     tells the two apart)
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank (empty or only whitespace), or not well-formed UTF-16
     * @throws RelockException if Redis fails
     * @throws IllegalStateException if this client is closed
     */
    public boolean forceUnlock(String name) {
        return runtime.forceUnlock(name);
    }

    /**
     * This client's unique id (a UUID); hold fields on Redis are {@code <clientId>:<threadId>}.
     *
     * @return the id
     */
    public String clientId() {
        return runtime.clientId();
    }

    /**
     * A new owner id for the async forms of {@link DistributedLock} ({@code lockAsync},
     * {@code tryLockAsync}, {@code unlockAsync}), for a flow that is not tied to one thread:
     *
     * <pre>{@code
     * long owner = Relock.newOwnerId();
     * lock.lockAsync(owner)
     *     .thenCompose(locked -> work())
     *     .whenComplete((result, error) -> lock.unlockAsync(owner));
     * }</pre>
     *
     * <p>The ids are negative, and thread ids are positive, so no thread ever counts as the
     * owner of such a hold: {@code isHeldByCurrentThread()} is false for it and a thread's
     * {@code unlock()} throws {@link IllegalMonitorStateException}. Each call returns a new id,
     * unique in this JVM across all clients (so one id may be used with the members of a
     * RedLock or multi-lock from several clients). On Redis the owner is the usual
     * {@code <clientId>:<id>} field, which Redisson clients read as any other.
     *
     * @return a negative id never returned before in this JVM
     */
    public static long newOwnerId() {
        return OwnerIds.next();
    }

    /**
     * The settings this client was created with.
     *
     * @return the configuration
     */
    public RelockConfig config() {
        return runtime.config();
    }

    /**
     * Registers a listener told when a lock held through this client is lost.
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    public void addLockListener(LockListener listener) {
        runtime.addListener(listener);
    }

    /**
     * Removes a listener registered with {@link #addLockListener(LockListener)}.
     *
     * @param listener the listener
     * @return {@code true} if it was registered
     * @throws NullPointerException if {@code listener} is null
     */
    public boolean removeLockListener(LockListener listener) {
        return runtime.removeListener(listener);
    }

    /**
     * Adds an observer of this client's lock events (see {@link LockObserver}); events that
     * happen from now on are reported to it. Observers given to
     * {@link RelockConfig.Builder#observer(LockObserver)} are registered already.
     *
     * @param observer the observer
     * @throws NullPointerException if {@code observer} is null
     * @throws IllegalArgumentException if it is registered already
     */
    public void addObserver(LockObserver observer) {
        runtime.addObserver(observer);
    }

    /**
     * Removes an observer; events from now on are not reported to it.
     *
     * @param observer the observer
     * @return {@code true} if it was registered
     * @throws NullPointerException if {@code observer} is null
     */
    public boolean removeObserver(LockObserver observer) {
        return runtime.removeObserver(observer);
    }

    /**
     * Closes the client: waits in progress fail with {@link IllegalStateException}, the watchdog
     * stops, the client's registry entry is deleted (waiting at most the command timeout for
     * that; if Redis is unreachable the entry expires by itself), connections and threads are
     * released, and the shutdown hook (see {@link RelockConfig.Builder#releaseOnShutdown(boolean)})
     * is removed. Held locks are not released: they expire with their leases. Calling it again has
     * no effect. Called while the JVM's shutdown hook of this client runs, it returns once the
     * hook is done.
     */
    @Override
    public void close() {
        Thread hook = shutdownHook.getAndSet(null);
        if (hook != null && hook != Thread.currentThread()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The JVM is stopping: the hook may run now; the runtime's close waits for it.
            }
        }
        runtime.close();
    }

    /** The registered shutdown hook, null when none is (for tests). */
    Thread shutdownHook() {
        return shutdownHook.get();
    }

    /** How many holds this client tracks: held, or ended and not yet forgotten (for tests). */
    int trackedHolds() {
        return runtime.trackedHolds();
    }

    @Override
    public String toString() {
        return "Relock{clientId=" + runtime.clientId() + ", " + runtime.config() + "}";
    }
}
