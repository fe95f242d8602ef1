package io.relock.internal.engine;

import io.netty.util.Timer;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.ReleaseEvent;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.WriteGateway;
import io.relock.internal.lease.Hold;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.support.Args;
import io.relock.internal.support.Observers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a {@link LockEngine} and its {@link Acquisition}s need of the client they run in: the
 * clock, the observers, the holds, the write path and its retry budgets, the timer, the unlock
 * channels, the list of waits to abort on close, how owners are named, and what the multi-locks
 * over engines ask of each member's client.
 * {@code ClientRuntime} is the one in production; a model test builds one on stand-ins, without
 * Redis, and runs the real engine on it.
 */
public abstract class LockClient {

    public abstract long nanoTime();

    public abstract Observers observers();

    public abstract Watchdog watchdog();

    public abstract WriteGateway gateway();

    /**
     * The budget of a waiting call: until {@code waitDeadlineNanos}, and at least the command
     * timeout, riding through a reconnect until then.
     */
    public abstract Budget budget(long waitDeadlineNanos);

    public abstract Timer timer();

    public abstract UnlockChannels channels();

    /** Where work that may run user code goes, off the I/O and timer threads and off callers' threads. */
    public abstract Executor executor();

    /** A wait starts: aborted if the client closes before it ends. */
    public abstract void register(Acquisition acquisition);

    public abstract void unregister(Acquisition acquisition);

    /** Fails once the client is closed. */
    public abstract void checkOpen();

    /** The hash field that identifies an owner of this client. */
    public abstract String field(long ownerId);

    /** The configured command timeout. */
    public abstract long commandTimeoutMillis();

    /** The budget of a call that does not wait: the command timeout from now. */
    public abstract Budget budget();

    /** Whether writes are confirmed on replicas before they count (Redis's replica sync). */
    public abstract boolean replicaSync();

    /** How long the lock under {@code key} has left in ms: -2 when free, -1 when it does not expire. */
    public abstract CompletableFuture<Long> ttl(String key);

    /** Where the back end is, for messages. */
    public abstract String target();

    public abstract void addListener(LockListener listener);

    public abstract boolean removeListener(LockListener listener);

    /** Tells the observers that {@code hold} ended, as {@code outcome} says. */
    final void released(Hold hold, ReleaseEvent.Outcome outcome) {
        hold.released(observers(), nanoTime(), outcome);
    }

    /**
     * Calls {@code listener} for the losses of {@code owner}'s holds of the lock named
     * {@code lockName} until the registration is closed.
     */

    public final ListenerRegistration addLostListener(String lockName, long owner, LockListener listener) {
        Args.notNull(listener, "listener");
        checkOpen();
        LockListener narrowed = event -> {
            if (event.ownerThreadId() == owner && event.lockName().equals(lockName)) {
                listener.onLockLost(event);
            }
        };
        addListener(narrowed);
        AtomicBoolean open = new AtomicBoolean(true);
        return () -> {
            if (open.compareAndSet(true, false)) {
                removeListener(narrowed);
            }
        };
    }
}
