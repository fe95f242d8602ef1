package io.relock.internal.engine;

import io.netty.util.Timer;
import io.relock.internal.ClientRuntime;
import io.relock.internal.Observers;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.redis.RedisGateway;
import io.relock.internal.redis.WriteGateway;
import java.util.concurrent.Executor;

/**
 * What an {@link Acquisition} needs of the client it runs in: the clock, the observers, the
 * holds, the write path and its retry budgets, the timer, the unlock channels, and the list of
 * waits to abort on close.
 * {@link ClientRuntime} is the one in production; a model test builds one on stand-ins, without
 * Redis.
 */
public abstract class LockClient {

    public abstract long nanoTime();

    public abstract Observers observers();

    public abstract Watchdog watchdog();

    public abstract WriteGateway gateway();

    /** See {@link RedisGateway#budget(long)}. */
    public abstract RedisGateway.Budget budget(long waitDeadlineNanos);

    public abstract Timer timer();

    public abstract UnlockChannels channels();

    /** Where work that may run user code goes, off the I/O and timer threads and off callers' threads. */
    public abstract Executor executor();

    /** A wait starts: aborted if the client closes before it ends. */
    public abstract void register(Acquisition acquisition);

    public abstract void unregister(Acquisition acquisition);
}
