package io.relock.internal.engine;

import io.relock.internal.backend.LockKeys;
import io.relock.internal.lease.WatchedLock;
import java.util.concurrent.CompletableFuture;

/**
 * What an {@link Acquisition} needs of its lock: its client, its driver, keys and wait policy,
 * how owners are named in its data, and how an uncertain acquire is undone. {@link LockEngine} is
 * the one in production; a model test builds one on a stand-in driver. An abstract class rather
 * than an interface, so that none of this becomes public.
 */
public abstract class AcquirableLock implements WatchedLock {

    abstract LockClient client();

    abstract LockDriver driver();

    abstract LockKeys keys();

    abstract WaitPolicy waitPolicy();

    /** A message's words for {@code operation} on this lock, e.g. "acquire lock 'x'". */
    abstract String describe(String operation);

    /** Undoes an acquire that may or may not have been applied; failures are logged, not thrown. */
    abstract CompletableFuture<Long> rollback(long owner, int countBefore, Throwable reason);
}
