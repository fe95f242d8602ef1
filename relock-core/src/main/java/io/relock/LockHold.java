package io.relock;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One hold of a {@link DistributedLock}, released by {@link #close()}, for try-with-resources:
 *
 * <pre>{@code
 * try (LockHold hold = lock.hold()) {
 *     // critical section; checked exceptions pass through unchanged
 * }
 * }</pre>
 *
 * <p>It stands for exactly one acquire, so holds of a reentrant lock nest as {@code lock()} and
 * {@code unlock()} pairs do. It is the acquiring thread's: close it on that thread (another
 * thread's {@code close()} fails as that thread's {@code unlock()} would, and spends the hold
 * object). Not thread-safe beyond {@link #close()} running its unlock at most once.
 */
public final class LockHold implements AutoCloseable {

    private final DistributedLock lock;
    private final AtomicBoolean closed = new AtomicBoolean();

    LockHold(DistributedLock lock) {
        this.lock = lock;
    }

    /**
     * The lock this hold is of.
     *
     * @return the lock
     */
    public DistributedLock getLock() {
        return lock;
    }

    /**
     * Releases this hold with {@link DistributedLock#unlock()}. Only the first call unlocks,
     * whatever its outcome; later calls do nothing. When it throws, the lock is as
     * {@code unlock()} leaves it: after a {@link RelockException} the hold is still on Redis
     * (and renewed by the watchdog), and {@code getLock().unlock()} may be tried again.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock: it was
     *     lost (lease ran out, renewal failed, force-unlocked) or this is another thread
     * @throws RelockException if Redis fails
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "LockHold{lock=" + lock.getName() + (closed.get() ? ", closed" : "") + "}";
    }
}
