package io.relock;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A pair of distributed locks on one name: many readers at once, or one writer (Redisson's
 * {@code RReadWriteLock} layout, so Relock and Redisson clients interoperate on the same names).
 *
 * <ul>
 *   <li>Both locks are reentrant and have leases and the watchdog like {@link DistributedLock}.
 *       Each reader's lease is renewed separately: a crashed reader stops blocking writers once
 *       its own lease is over, whatever the other readers do.</li>
 *   <li>Downgrade: the writer may take the read lock; releasing the write lock then keeps the
 *       read lock.</li>
 *   <li>Upgrade: a thread holding only the read lock that asks for the write lock gets an
 *       {@link IllegalMonitorStateException} instead of waiting forever for itself.</li>
 *   <li>Releasing the write lock wakes every waiter; releasing the last read lock wakes one.</li>
 * </ul>
 */
public interface DistributedReadWriteLock extends ReadWriteLock {

    /**
     * The shared lock.
     *
     * @return the read lock
     */
    @Override
    DistributedLock readLock();

    /**
     * The exclusive lock.
     *
     * @return the write lock
     */
    @Override
    DistributedLock writeLock();

    /**
     * The lock's name.
     *
     * @return the name
     */
    String getName();
}
