package io.relock.internal.engine;

import io.netty.util.Timer;
import io.relock.AcquireEvent;
import io.relock.LockListener;
import io.relock.LockObserver;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.ChannelCommands;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.backend.WriteGateway;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.lease.WatchdogTest;
import io.relock.internal.support.Observers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client an {@link Acquisition} runs on in the model tests, on stand-ins: a confirmed write
 * path, unlock channels on a fake pub/sub connection that counts (un)subscribes, a watchdog that
 * never ticks, a clock and a timer the model moves. The lock's engine, its acquisitions and
 * releases, its channel (reference counts, parking) and the watchdog's records are the real ones.
 * A fresh one per interleaving.
 */
public final class ModelClient extends LockClient {

    final AtomicLong clock = new AtomicLong(TimeUnit.SECONDS.toNanos(100));
    final ManualTimer timer = new ManualTimer();
    final AtomicInteger subscribes = new AtomicInteger();
    final AtomicInteger unsubscribes = new AtomicInteger();
    /** Acquires that ended, as the observers saw them. */
    final AtomicInteger ends = new AtomicInteger();
    /** When set, every write confirmation waits for it (only plain tests set it). */
    volatile CompletableFuture<WriteConfirmation> confirmations;

    // Built here rather than read from WriteConfirmation.CONFIRMED: Lincheck cannot restore a
    // record class's static fields between interleavings (Unsafe refuses their offsets).
    private final WriteConfirmation confirmed = new WriteConfirmation(WriteConfirmation.Outcome.CONFIRMED, 0);
    private final List<Acquisition> waiting = new ArrayList<>(); // guarded by this
    final Watchdog watchdog;
    private final Observers observers = new Observers(List.of(new LockObserver() {
        @Override
        public void onAcquireEnd(AcquireEvent event, Object context) {
            ends.incrementAndGet();
        }
    }));
    final UnlockChannels channels = new UnlockChannels(new ChannelCommands() {
        @Override
        public CompletableFuture<Void> subscribe(String channel) {
            subscribes.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> unsubscribe(String channel) {
            unsubscribes.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }
    }, timer, false);
    private final WriteGateway gateway = new WriteGateway() {
        @Override
        public long connectionEpoch() {
            return 0;
        }

        @Override
        public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
            CompletableFuture<WriteConfirmation> gate = confirmations;
            return gate != null ? gate : CompletableFuture.completedFuture(confirmed);
        }

        @Override
        public int replicaSyncMinReplicas() {
            return 0;
        }

        @Override
        public long replicaSyncTimeoutMillis() {
            return 0;
        }
    };

    /** With a watchdog that never ticks and tells a loss to the lock. */
    ModelClient() {
        watchdog = new Watchdog(new WatchdogTest.FakeRenewals(), timer, clock::get, 30_000,
                (hold, cause) -> hold.lock.holdLost(), new Observers(List.of()), () -> { });
    }

    /** With the watchdog a model of it drives. */
    public ModelClient(Watchdog watchdog) {
        this.watchdog = watchdog;
    }

    @Override
    public long nanoTime() {
        return clock.get();
    }

    @Override
    public Observers observers() {
        return observers;
    }

    @Override
    public Watchdog watchdog() {
        return watchdog;
    }

    @Override
    public WriteGateway gateway() {
        return gateway;
    }

    @Override
    public Timer timer() {
        return timer;
    }

    @Override
    public Budget budget(long waitDeadlineNanos) {
        return new Budget(waitDeadlineNanos, waitDeadlineNanos);
    }

    @Override
    public UnlockChannels channels() {
        return channels;
    }

    @Override
    public java.util.concurrent.Executor executor() {
        return Runnable::run;
    }

    @Override
    public synchronized void register(Acquisition acquisition) {
        waiting.add(acquisition);
    }

    @Override
    public synchronized void unregister(Acquisition acquisition) {
        waiting.remove(acquisition);
    }

    synchronized boolean anyWaiting() {
        return !waiting.isEmpty();
    }

    /**
     * Whether every subscription was given back, each exactly once: no waiter holds one, and each
     * channel subscribed was unsubscribed or lingers (after a win, see UnlockChannels#release).
     */
    boolean channelsGivenBack() {
        return channels.waitedOnChannels() == 0
                && unsubscribes.get() + channels.subscribedChannels() == subscribes.get();
    }

    String channelsText() {
        return subscribes + " subscribes, " + unsubscribes + " unsubscribes, " + channels.subscribedChannels()
                + " channels still subscribed, " + channels.waitedOnChannels() + " of them by waiters";
    }

    @Override
    public void checkOpen() {
    }

    @Override
    public String field(long ownerThreadId) {
        return "client:" + ownerThreadId;
    }

    @Override
    public long commandTimeoutMillis() {
        return 3_000;
    }

    @Override
    public Budget budget() {
        return budget(nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis()));
    }

    @Override
    public boolean replicaSync() {
        return false;
    }

    @Override
    public CompletableFuture<Long> ttl(String key) {
        throw new UnsupportedOperationException("the model reads no TTL");
    }

    @Override
    public String target() {
        return "model";
    }

    @Override
    public void addListener(LockListener listener) {
        throw new UnsupportedOperationException("the model runs no multi-lock");
    }

    @Override
    public boolean removeListener(LockListener listener) {
        throw new UnsupportedOperationException("the model runs no multi-lock");
    }

    /** The real engine of a lock on this client, on {@code driver}; owner fields are {@code client:<owner>}. */
    public LockEngine lock(LockDriver driver, String name, String channel) {
        return new LockEngine(this, new LockKeys(name, name, channel), driver, WaitPolicy.PUB_SUB);
    }
}
