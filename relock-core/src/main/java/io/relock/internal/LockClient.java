package io.relock.internal;

import io.netty.util.Timer;
import java.util.concurrent.Executor;

/**
 * What an {@link Acquisition} needs of the client it runs in: the clock, the observers, the
 * holds, the write path and its retry budgets, the timer, the unlock channels, and the list of
 * waits to abort on close.
 * {@link ClientRuntime} is the one in production; a model test builds one on stand-ins, without
 * Redis. An abstract class rather than an interface, so that none of this becomes public.
 */
abstract class LockClient {

    abstract long nanoTime();

    abstract Observers observers();

    abstract Watchdog watchdog();

    abstract WriteGateway gateway();

    /** See {@link RedisGateway#budget(long)}. */
    abstract RedisGateway.Budget budget(long waitDeadlineNanos);

    abstract Timer timer();

    abstract UnlockChannels channels();

    /** Where work that may run user code goes, off the I/O and timer threads and off callers' threads. */
    abstract Executor executor();

    /** A wait starts: aborted if the client closes before it ends. */
    abstract void register(Acquisition acquisition);

    abstract void unregister(Acquisition acquisition);
}
