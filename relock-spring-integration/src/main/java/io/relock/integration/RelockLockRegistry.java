package io.relock.integration;

import io.relock.Relock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} whose
 * locks are Relock's reentrant locks ({@link Relock#getLock(String)}): the replacement for
 * {@code RedisLockRegistry} is one bean.
 *
 * <pre>{@code
 * @Bean
 * RelockLockRegistry lockRegistry(Relock relock) {
 *     return new RelockLockRegistry(relock, "my-app");
 * }
 * }</pre>
 *
 * <h2>Names</h2>
 * The lock for {@code lockKey} is the Relock lock named {@code <registryKey>:<lockKey>}, the
 * Redis key {@code RedisLockRegistry} uses for the same registry key and lock key (after
 * {@link io.relock.RelockConfig#keyPrefix()}, if the client has one). Any non-null key is
 * accepted: its {@link Object#toString()} is the name within the registry, so {@code 42} and
 * {@code "42"} are one lock. An empty registry key means no prefix: the lock key alone is the
 * name. Every registry on the same Redis with the same registry key (and the same client key
 * prefix), in this process or in any other, shares the locks.
 *
 * <h2>Semantics, and where they differ from {@code RedisLockRegistry}</h2>
 * <ul>
 *   <li>Reentrant per thread, as Relock's locks are: the owner is the {@link Relock} client plus
 *       the thread. Two registries on one {@code Relock} client are therefore the same owner to a
 *       thread, which may hold a key through both ({@code RedisLockRegistry} makes each registry
 *       an owner of its own).</li>
 *   <li>Leases: without a lease time (the default), a held lock is renewed by Relock's watchdog
 *       until the last unlock, so it is never lost to a long critical section, and a crashed
 *       holder's lock ends after {@link io.relock.RelockConfig#watchdogTimeout()}. With a lease
 *       time (like {@code RedisLockRegistry}'s {@code expireAfter}), each hold ends when its lease
 *       does, held or not, unless {@link #renewLock(Object)} extends it.
 *       {@link DistributedLock#lock(Duration)} and {@link DistributedLock#tryLock(Duration, Duration)}
 *       take that hold's lease instead.</li>
 *   <li>{@code unlock()} by a thread that does not hold the lock, or after its hold was lost,
 *       throws {@link IllegalMonitorStateException}, the JDK's exception for that
 *       ({@code RedisLockRegistry} throws {@link IllegalStateException} when the thread does not
 *       hold it, and {@link java.util.ConcurrentModificationException} when the lease had run
 *       out).</li>
 *   <li>Redis trouble is a {@link io.relock.RelockException} from every lock method (after
 *       Relock's retries; see {@link io.relock.DistributedLock}), not Spring's
 *       {@code CannotAcquireLockException}; {@code tryLock} never answers {@code false} for it.</li>
 *   <li>No cache of lock objects, so no capacity limit: {@link #obtain(Object)} returns a new,
 *       cheap object each time, and two objects for one key are the same lock.</li>
 *   <li>Interrupts: {@code lockInterruptibly()} and {@code tryLock} with a wait end with
 *       {@link InterruptedException} and nothing held; {@code lock()} waits on and keeps the flag;
 *       {@code tryLock()} ignores it.</li>
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}, as in
 *       {@code RedisLockRegistry}.</li>
 * </ul>
 *
 * <h2>Not with {@code RedisLockRegistry} on the same keys</h2>
 * Relock and {@code RedisLockRegistry} store a lock differently (a hash with an owner field
 * against a string with the owner's id), so they never wait for each other. On one Redis key,
 * whichever comes second while the other holds it fails with Redis's {@code WRONGTYPE} error (a
 * {@link io.relock.RelockException}, or {@code CannotAcquireLockException}); with a Relock
 * {@link io.relock.RelockConfig#keyPrefix() key prefix} or another registry key they use
 * different Redis keys and both hold the lock at once. Move every service that uses a lock key
 * to Relock at the same time.
 *
 * <p>Thread-safe.
 */
public final class RelockLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    private static final long WATCHDOG = -1;

    private final Relock relock;
    private final String registryKey;
    /** The lease of each hold in milliseconds, or {@link #WATCHDOG}. */
    private final long leaseMillis;

    /**
     * A registry whose locks the watchdog renews while they are held.
     *
     * @param relock the client the locks belong to; the registry does not close it
     * @param registryKey the prefix of every lock name ({@code <registryKey>:<lockKey>}), or
     *     empty for none
     * @throws NullPointerException if {@code relock} or {@code registryKey} is null
     */
    public RelockLockRegistry(Relock relock, String registryKey) {
        this(relock, registryKey, WATCHDOG);
    }

    /**
     * A registry whose holds last {@code leaseTime} each, unless renewed with
     * {@link #renewLock(Object)}: {@code RedisLockRegistry}'s {@code expireAfter}.
     *
     * @param relock the client the locks belong to; the registry does not close it
     * @param registryKey the prefix of every lock name ({@code <registryKey>:<lockKey>}), or
     *     empty for none
     * @param leaseTime how long each hold lasts
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code leaseTime} is under one millisecond (one too
     *     large for Redis is rejected by the lock methods, with the same exception)
     */
    public RelockLockRegistry(Relock relock, String registryKey, Duration leaseTime) {
        this(relock, registryKey, positiveMillis(leaseTime, "leaseTime"));
    }

    private RelockLockRegistry(Relock relock, String registryKey, long leaseMillis) {
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.registryKey = Objects.requireNonNull(registryKey, "registryKey must not be null");
        this.leaseMillis = leaseMillis;
    }

    /**
     * The lock for {@code lockKey}: Relock's reentrant lock named {@code <registryKey>:<lockKey>}.
     * Sends nothing to Redis.
     *
     * @param lockKey the key; its {@code toString()} names the lock
     * @return the lock, a {@link DistributedLock} whose {@code lock(Duration)} and
     *     {@code tryLock(Duration, Duration)} take a lease for that hold
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey}'s string is empty, or the name is one
     *     Relock rejects (see {@link Relock#getLock(String)})
     * @throws IllegalStateException if the {@code Relock} client is closed
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return new RelockRegistryLock(this, relockLock(lockKey), leaseMillis);
    }

    /**
     * Does nothing: this registry keeps no lock objects to expire. {@link #obtain(Object)} makes
     * a new, cheap object each time, and what Relock knows of a lock lives in Redis and, while it
     * is held, in the client's watchdog, which forgets it at the last unlock.
     *
     * @param age ignored
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        // Nothing cached: see the Javadoc.
    }

    /**
     * Restarts the lease of the current thread's hold on {@code lockKey} at this registry's lease
     * time, or, for a registry without one, at {@link io.relock.RelockConfig#watchdogTimeout()}
     * (a hold that the watchdog renews stays renewed by it). Takes four round trips to Redis: the
     * hold count is read before and after a re-entry with the new lease, and that re-entry is
     * released, so the hold count stays as it was.
     *
     * @param lockKey the key of a lock the current thread holds
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey}'s string is empty
     * @throws IllegalStateException if the current thread does not hold the lock (never did, or
     *     its lease ran out), as {@code RedisLockRegistry} does
     * @throws io.relock.RelockException if Redis could not be reached
     */
    @Override
    public void renewLock(Object lockKey) {
        long lease = leaseMillis != WATCHDOG ? leaseMillis : relock.config().watchdogTimeout().toMillis();
        renew(relockLock(lockKey), lease);
    }

    /**
     * Restarts the lease of the current thread's hold on {@code lockKey} at {@code ttl}; later
     * renewals and re-entries use their own lease. A hold that the watchdog renews stays renewed
     * by it, at the watchdog's lease ({@code ttl} then has no lasting effect). Takes four round
     * trips, as {@link #renewLock(Object)} does.
     *
     * @param lockKey the key of a lock the current thread holds
     * @param ttl the new lease
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code lockKey}'s string is empty, or {@code ttl} is
     *     under one millisecond or too large for Redis
     * @throws IllegalStateException if the current thread does not hold the lock (never did, or
     *     its lease ran out), as {@code RedisLockRegistry} does
     * @throws io.relock.RelockException if Redis could not be reached
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        long lease = positiveMillis(ttl, "ttl");
        renew(relockLock(lockKey), lease);
    }

    /**
     * Ignored: Relock's watchdog renews the holds of a registry without a lease time, batched for
     * all locks of the client, so no scheduler is needed. For a registry with a lease time, call
     * {@link #renewLock(Object)} or use one without a lease time instead.
     *
     * @param renewalTaskScheduler ignored
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        // The watchdog renews: see the Javadoc.
    }

    /**
     * The prefix of this registry's lock names.
     *
     * @return the registry key given to the constructor
     */
    public String registryKey() {
        return registryKey;
    }

    /**
     * How long each hold lasts, if this registry has a fixed lease.
     *
     * @return the lease time, or {@code null} when the watchdog renews the holds
     */
    public Duration leaseTime() {
        return leaseMillis == WATCHDOG ? null : Duration.ofMillis(leaseMillis);
    }

    @Override
    public String toString() {
        return "RelockLockRegistry{registryKey='" + registryKey + "', leaseTime="
                + (leaseMillis == WATCHDOG ? "watchdog" : Duration.ofMillis(leaseMillis)) + ", relock=" + relock + "}";
    }

    private io.relock.DistributedLock relockLock(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey must not be null");
        String key = lockKey.toString();
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("lockKey must not be empty: '" + lockKey + "' of " + lockKey.getClass());
        }
        return relock.getLock(registryKey.isEmpty() ? key : registryKey + ':' + key);
    }

    /**
     * Re-enters with the new lease, then releases that re-entry: the hold count stays. Relock
     * re-enters with the lease asked for and keeps it when it releases a re-entry.
     */
    private static void renew(io.relock.DistributedLock lock, long lease) {
        int before = lock.getHoldCount();
        if (before == 0) {
            throw notHeld(lock);
        }
        boolean acquired;
        try {
            acquired = lock.tryLock(0, lease, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while renewing the lock '" + lock.getName() + "'", e);
        }
        if (!acquired) {
            // The hold ran out after the check, and another owner took the lock.
            throw notHeld(lock);
        }
        int after = lock.getHoldCount();
        if (after > 0) {
            lock.unlock();
        }
        if (after != before + 1) {
            // The hold ran out after the check and the acquire took the lock afresh: given back above.
            throw notHeld(lock);
        }
    }

    private static IllegalStateException notHeld(io.relock.DistributedLock lock) {
        return new IllegalStateException("Could not renew the lock '" + lock.getName()
                + "': the current thread does not hold it (never did, or its lease ran out)");
    }

    /** Milliseconds of a lease, rejecting what Relock would read as "no lease" or not at all. */
    static long positiveMillis(Duration lease, String argument) {
        Objects.requireNonNull(lease, () -> argument + " must not be null");
        long millis = TimeUnit.MILLISECONDS.convert(lease);
        if (millis < 1) {
            throw new IllegalArgumentException(argument + " must be at least 1 ms: " + lease);
        }
        return millis;
    }
}
