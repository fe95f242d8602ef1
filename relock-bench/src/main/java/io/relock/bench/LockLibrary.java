package io.relock.bench;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * One client of a lock library, connected to one Redis server: what every scenario measures
 * through. Each library is used the way its users use it, with its defaults.
 *
 * <p>A lock type a library version does not have is an empty {@link Optional}; the scenario
 * then reports it as not available. Supporting it later means implementing the method in that
 * library's adapter, nothing else.
 */
interface LockLibrary extends AutoCloseable {

    /** The reentrant lock with a watchdog-renewed lease: {@code lock()} / {@code unlock()}. */
    Lock lock(String name);

    /** A fair (first come, first served) lock, or empty if this version has none. */
    Optional<Lock> fairLock(String name);

    /** The write lock of the read-write lock {@code name}, or empty if this version has none. */
    Optional<Lock> writeLock(String name);

    /**
     * A RedLock over one lock named {@code name} per master, each master a client of this same
     * library (this client being one of them), or empty if this version has none.
     */
    Optional<Lock> redLock(String name, List<LockLibrary> masters);

    /**
     * The reentrant lock {@code name} as a reactive pipeline takes it, each subscription its own
     * owner (S7), or empty if this version has no reactive lock.
     */
    Optional<PipelineLock> pipelineLock(String name);

    /**
     * Binds the library's own Micrometer lock metrics for this client to {@code registry}, or
     * empty if it has none; closing the result unbinds them.
     */
    Optional<AutoCloseable> bindMetrics(MeterRegistry registry);

    /**
     * Whether a lock held without a lease time is renewed by a watchdog for as long as it is
     * held; false when it keeps a fixed lease (S5's watchdog case then does not apply).
     */
    boolean renewsLeases();

    /** Releases the client's connections and threads. */
    @Override
    void close();
}
