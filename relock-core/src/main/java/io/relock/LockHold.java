package io.relock;

import java.time.Duration;
import java.util.Objects;
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

    /**
     * Releases this hold with {@link DistributedLock#unlock(Duration)}: the lock stays held until
     * it has lasted at least {@code holdAtLeast} since this hold was taken. Only the first call
     * of either {@code close} acts, so the try-with-resources' own {@code close()} after this
     * one does nothing:
     * <pre>{@code
     * try (LockHold hold = lock.tryHold()) {
     *     if (hold == null) {
     *         return; // another node ran it this period
     *     }
     *     report.send();
     *     hold.close(Duration.ofSeconds(50)); // if it threw, the lock is released at once instead
     * }
     * }</pre>
     *
     * @param holdAtLeast the minimum time the lock is held, counted from the acquire
     * @throws NullPointerException if {@code holdAtLeast} is null (the hold is not spent)
     * @throws IllegalArgumentException if {@code holdAtLeast} is negative (the hold is not spent)
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     * @throws UnsupportedOperationException if the lock cannot be kept (the hold is not spent)
     * @throws RelockException if Redis fails
     */
    public void close(Duration holdAtLeast) {
        Objects.requireNonNull(holdAtLeast, "holdAtLeast must not be null");
        if (holdAtLeast.isNegative()) {
            throw new IllegalArgumentException("holdAtLeast must not be negative: " + holdAtLeast);
        }
        if (closed.compareAndSet(false, true)) {
            try {
                lock.unlock(holdAtLeast);
            } catch (UnsupportedOperationException e) {
                closed.set(false);
                throw e;
            }
        }
    }

    @Override
    public String toString() {
        return "LockHold{lock=" + lock.getName() + (closed.get() ? ", closed" : "") + "}";
    }
}
