package io.relock.integration;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * What {@link RelockLockRegistry#obtain(Object)} returns: a Relock reentrant lock seen through
 * Spring Integration's {@link DistributedLock}, each hold taking the registry's lease (or the
 * watchdog) unless the caller names one.
 */
final class RelockRegistryLock implements DistributedLock {

    private final RelockLockRegistry registry;
    private final io.relock.DistributedLock lock;
    /** The registry's lease in milliseconds, or -1: Relock's "the watchdog renews". */
    private final long leaseMillis;

    RelockRegistryLock(RelockLockRegistry registry, io.relock.DistributedLock lock, long leaseMillis) {
        this.registry = registry;
        this.lock = lock;
        this.leaseMillis = leaseMillis;
    }

    @Override
    public void lock() {
        lock.lock(leaseMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void lock(Duration ttl) {
        lock.lock(RelockLockRegistry.positiveMillis(ttl, "ttl"), TimeUnit.MILLISECONDS);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lock.lockInterruptibly(leaseMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean tryLock() {
        if (leaseMillis < 0) {
            return lock.tryLock();
        }
        // Lock.tryLock() ignores the interrupt flag, as Relock's own does: the one attempt runs
        // with the flag cleared, which is set again after it.
        boolean interrupted = Thread.interrupted();
        try {
            return lock.tryLock(0, leaseMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // Interrupted during the attempt, which Relock then undid.
            interrupted = true;
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        // Waits to the nanosecond; the lease in one unit with the wait, -1 staying "the watchdog".
        long lease = leaseMillis < 0 ? leaseMillis : TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        return lock.tryLock(unit.toNanos(time), lease, TimeUnit.NANOSECONDS);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime must not be null");
        long lease = RelockLockRegistry.positiveMillis(ttl, "ttl");
        // convert saturates where Duration.toNanos() would throw: a very long wait means "wait".
        return lock.tryLock(TimeUnit.NANOSECONDS.convert(waitTime), TimeUnit.MILLISECONDS.toNanos(lease),
                TimeUnit.NANOSECONDS);
    }

    @Override
    public void unlock() {
        lock.unlock();
    }

    @Override
    public Condition newCondition() {
        return lock.newCondition();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RelockRegistryLock that && registry == that.registry
                && lock.getName().equals(that.lock.getName());
    }

    @Override
    public int hashCode() {
        return lock.getName().hashCode();
    }

    @Override
    public String toString() {
        return "RelockRegistryLock{name='" + lock.getName() + "'}";
    }
}
