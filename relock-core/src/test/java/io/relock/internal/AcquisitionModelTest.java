package io.relock.internal;

import static io.relock.internal.ModelScenarios.scenario;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.Timer;
import io.relock.AcquireEvent;
import io.relock.LockObserver;
import io.relock.internal.LockDriver.Attempt;
import io.relock.internal.LockDriver.Request;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck's model checker over one {@link Acquisition} racing against itself: the driver's
 * replies arriving, the holder releasing (an unlock message), the caller's interrupt
 * ({@link Acquisition#cancel()}), the client closing ({@link Acquisition#abort}) and the wait
 * timing out, in every interleaving of a few of them. Redis, the pub/sub connection, the timer
 * and the clock are stand-ins the model drives; the acquisition, its unlock channel (reference
 * counts and parking) and the watchdog's records are the real ones. After each interleaving the
 * model lets every reply and timeout still due happen, then checks what must hold however the
 * race went.
 */
class AcquisitionModelTest {

    @Test
    void noInterleavingLeaksAHoldOrASubscriptionOrEndsAnAcquireTwice() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
                // The first attempt wins while the client closes.
                .addCustomScenario(scenario(Race.class, List.of("otherReleases"),
                        List.of(List.of("reply"), List.of("close"))))
                // The first attempt wins while the caller is interrupted.
                .addCustomScenario(scenario(Race.class, List.of("otherReleases"),
                        List.of(List.of("reply"), List.of("interrupt"))))
                // Busy, subscribed, second attempt in flight: the holder releases while the wait
                // times out and the caller is interrupted.
                .addCustomScenario(scenario(Race.class, List.of("reply"),
                        List.of(List.of("otherReleases", "reply"), List.of("timeOut"), List.of("interrupt"))))
                // The first attempt finds the lock busy and subscribes while the client closes.
                .addCustomScenario(scenario(Race.class, List.of(),
                        List.of(List.of("reply"), List.of("close"))))
                .addCustomScenario(scenario(Race.class, List.of(),
                        List.of(List.of("close"), List.of("reply"))))
                // Parked on the channel: the unlock message, the close and the timeout together.
                .addCustomScenario(scenario(Race.class, List.of("reply", "reply"),
                        List.of(List.of("otherReleases", "reply"), List.of("close"), List.of("timeOut"))))
                .check(Race.class);
    }

    @Test
    void aCloseWhileAWonAcquireIsBeingConfirmedUndoesIt() throws Exception {
        Race race = new Race();
        CompletableFuture<WriteConfirmation> replicas = new CompletableFuture<>();
        race.client.confirmations = replicas;
        race.otherReleases();
        race.reply(); // the first attempt takes the lock; its confirmation waits
        race.close();
        assertThat(race.acquisition.result).isCompletedExceptionally();

        replicas.complete(new WriteConfirmation(WriteConfirmation.Outcome.CONFIRMED, 0));
        race.endedOnceWithNothingLeaked();
        assertThat(race.holder()).as("undone on Redis").isEqualTo("nobody");
    }

    /** The model Lincheck drives; a fresh instance (and acquisition) per interleaving. */
    public static class Race {

        private static final String NAME = "raced";
        private static final String CHANNEL = "redisson_lock__channel:{raced}";
        private static final long OWNER = 7;
        private static final String FIELD = "client:7";
        private static final long WAIT_MILLIS = 10_000;

        private final AtomicLong clock = new AtomicLong(TimeUnit.SECONDS.toNanos(100));
        private final ManualTimer timer = new ManualTimer();
        /** Who holds the lock on "Redis": another client at first, later perhaps this owner, or nobody. */
        private String holder = "other"; // guarded by this
        /** Acquire calls sent and not answered yet, oldest first. */
        private final ArrayDeque<CompletableFuture<Attempt>> pending = new ArrayDeque<>(); // guarded by this
        private final AtomicInteger subscribes = new AtomicInteger();
        private final AtomicInteger unsubscribes = new AtomicInteger();
        private final AtomicInteger ends = new AtomicInteger();
        /** Set once {@link Acquisition#cancel()} has returned. */
        private volatile boolean interrupted;
        /** Whether Redis granted the lock to an attempt whose reply came after the interrupt. */
        private volatile boolean wonAfterInterrupt;
        private final List<Acquisition> waiting = new ArrayList<>(); // guarded by this
        private final RuntimeException closing = new IllegalStateException("client closing");
        private final Client client = new Client();
        private final Acquisition acquisition;

        public Race() {
            acquisition = new Acquisition(new Lock(client, new Driver()), OWNER, TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS),
                    Args.WATCHDOG_LEASE);
            acquisition.begin();
        }

        /** The lock's driver on a Redis of one key: acquire succeeds when nobody holds it. */
        private final class Driver implements LockDriver {

            @Override
            public String type() {
                return "model";
            }

            @Override
            public CompletableFuture<Attempt> acquire(Request request) {
                CompletableFuture<Attempt> reply = new CompletableFuture<>();
                synchronized (Race.this) {
                    pending.addLast(reply);
                }
                return reply;
            }

            @Override
            public CompletableFuture<Long> rollback(String field, int countBefore) {
                synchronized (Race.this) {
                    if (holder.equals(field)) {
                        holder = "nobody";
                        return CompletableFuture.completedFuture(1L);
                    }
                }
                return CompletableFuture.completedFuture(0L);
            }

            @Override
            public CompletableFuture<Integer> holdCount(String field) {
                return CompletableFuture.completedFuture(0);
            }

            @Override
            public CompletableFuture<Long> release(Request request) {
                throw new UnsupportedOperationException("the model only acquires");
            }

            @Override
            public CompletableFuture<Long> forceRelease() {
                throw new UnsupportedOperationException("the model only acquires");
            }

            @Override
            public CompletableFuture<Boolean> isLocked() {
                throw new UnsupportedOperationException("the model only acquires");
            }

            @Override
            public Script renewScript() {
                return Script.LOCK_RENEW;
            }
        }

        /** The lock as the acquisition sees it; an undo goes straight to the driver, as the engine's does. */
        private static final class Lock extends AcquirableLock {

            private final Client client;
            private final Driver driver;
            private final LockKeys keys = new LockKeys(NAME, NAME, CHANNEL);

            Lock(Client client, Driver driver) {
                this.client = client;
                this.driver = driver;
            }

            @Override
            public String getName() {
                return NAME;
            }

            @Override
            public String key() {
                return NAME;
            }

            @Override
            public String type() {
                return driver.type();
            }

            @Override
            public Script renewScript() {
                return driver.renewScript();
            }

            @Override
            LockClient client() {
                return client;
            }

            @Override
            LockDriver driver() {
                return driver;
            }

            @Override
            LockKeys keys() {
                return keys;
            }

            @Override
            WaitPolicy waitPolicy() {
                return WaitPolicy.PUB_SUB;
            }

            @Override
            String fieldOf(long owner) {
                return "client:" + owner;
            }

            @Override
            String describe(String operation) {
                return operation + " lock '" + NAME + "'";
            }

            @Override
            CompletableFuture<Long> rollback(long owner, int countBefore, Throwable reason) {
                return driver.rollback(fieldOf(owner), countBefore);
            }
        }

        /** The client on stand-ins: a confirmed write path, channels on a fake pub/sub, a watchdog that never ticks. */
        private final class Client extends LockClient {

            // Built here rather than read from WriteConfirmation.CONFIRMED: Lincheck cannot restore a
            // record class's static fields between interleavings (Unsafe refuses their offsets).
            private final WriteConfirmation confirmed = new WriteConfirmation(WriteConfirmation.Outcome.CONFIRMED, 0);
            /** When set, every write confirmation waits for it (only the plain test sets it). */
            volatile CompletableFuture<WriteConfirmation> confirmations;
            private final WatchdogTest.FakeRenewals renewals = new WatchdogTest.FakeRenewals();
            private final Watchdog watchdog = new Watchdog(renewals, timer, clock::get, 30_000, (hold, cause) -> { },
                    new Observers(List.of()), () -> { });
            private final Observers observers = new Observers(List.of(new LockObserver() {
                @Override
                public void onAcquireEnd(AcquireEvent event, Object context) {
                    ends.incrementAndGet();
                }
            }));
            private final UnlockChannels channels = new UnlockChannels(new UnlockChannels.Commands() {
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

            @Override
            long nanoTime() {
                return clock.get();
            }

            @Override
            Observers observers() {
                return observers;
            }

            @Override
            Watchdog watchdog() {
                return watchdog;
            }

            @Override
            WriteGateway gateway() {
                return gateway;
            }

            @Override
            Timer timer() {
                return timer;
            }

            @Override
            RedisGateway.Budget budget(long waitDeadlineNanos) {
                return new RedisGateway.Budget(waitDeadlineNanos, waitDeadlineNanos);
            }

            @Override
            UnlockChannels channels() {
                return channels;
            }

            @Override
            void register(Acquisition acquisition) {
                synchronized (Race.this) {
                    waiting.add(acquisition);
                }
            }

            @Override
            void unregister(Acquisition acquisition) {
                synchronized (Race.this) {
                    waiting.remove(acquisition);
                }
            }
        }

        synchronized String holder() {
            return holder;
        }

        /** Redis answers the oldest acquire in flight: taken if nobody holds the lock, else busy. */
        @Operation(nonParallelGroup = "io")
        public void reply() {
            CompletableFuture<Attempt> reply;
            Attempt attempt;
            boolean afterInterrupt = interrupted;
            synchronized (this) {
                reply = pending.pollFirst();
                if (reply == null) {
                    return;
                }
                if (holder.equals("nobody")) {
                    holder = FIELD;
                    attempt = Attempt.acquired(0);
                    wonAfterInterrupt |= afterInterrupt;
                } else {
                    attempt = Attempt.busy(5_000);
                }
            }
            reply.complete(attempt);
        }

        /** The other client unlocks: the key goes, and the unlock message reaches this client's channel. */
        @Operation(nonParallelGroup = "io")
        public void otherReleases() {
            synchronized (this) {
                if (!holder.equals("other")) {
                    return;
                }
                holder = "nobody";
            }
            client.channels.onMessage(CHANNEL, UnlockChannels.UNLOCK_MESSAGE);
        }

        /** The waiting caller is interrupted. */
        @Operation(runOnce = true)
        public void interrupt() {
            acquisition.cancel();
            interrupted = true;
        }

        /** The client closes while the acquire is under way. */
        @Operation(runOnce = true)
        public void close() {
            acquisition.abort(closing);
        }

        /** The wait runs out: the clock passes the deadline and every timeout due fires. */
        @Operation(nonParallelGroup = "timer")
        public void timeOut() throws Exception {
            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS + 1));
            timer.elapse();
        }

        /**
         * Lets the acquire run to its end (replies answered, timeouts fired, bounded), then checks:
         * it ended once; an acquire won after the interrupt was undone; the caller's answer
         * matches Redis and the watchdog's records (so one won around a close was undone or
         * reported as held); the channel was given back exactly once; the client no longer lists
         * the wait.
         */
        @Validate
        public void endedOnceWithNothingLeaked() throws Exception {
            for (int step = 0; step < 20 && !acquisition.result.isDone(); step++) {
                reply();
                timeOut();
            }
            if (!acquisition.result.isDone()) {
                throw new IllegalStateException("the acquire never ended: " + acquisition);
            }
            if (ends.get() != 1) {
                throw new IllegalStateException("the acquire ended " + ends.get() + " times");
            }
            boolean acquired = !acquisition.result.isCompletedExceptionally() && acquisition.result.get().acquired();
            String held;
            synchronized (this) {
                held = holder;
            }
            if (acquired && wonAfterInterrupt) {
                throw new IllegalStateException("an acquire that won after the interrupt was kept, not undone");
            }
            if (acquired != held.equals(FIELD)) {
                throw new IllegalStateException("caller told acquired=" + acquired + " but Redis holder is " + held);
            }
            if (acquired != (client.watchdog.size() == 1)) {
                throw new IllegalStateException("caller told acquired=" + acquired + " but the watchdog tracks "
                        + client.watchdog.size() + " holds");
            }
            if (client.channels.subscribedChannels() != 0 || unsubscribes.get() != subscribes.get()) {
                throw new IllegalStateException(subscribes + " subscribes, " + unsubscribes + " unsubscribes, "
                        + client.channels.subscribedChannels() + " channels still subscribed");
            }
            synchronized (this) {
                if (!waiting.isEmpty()) {
                    throw new IllegalStateException("the client still lists the wait");
                }
            }
        }
    }
}
