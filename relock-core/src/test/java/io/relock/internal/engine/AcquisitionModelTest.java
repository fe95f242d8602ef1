package io.relock.internal.engine;

import static io.relock.internal.engine.ModelScenarios.scenario;
import static io.relock.internal.engine.ModelScenarios.storeCallsAtomic;
import static org.assertj.core.api.Assertions.assertThat;

import io.relock.internal.backend.Budget;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.model.MemoryStore;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck's model checker over one {@link Acquisition} racing against itself: the driver's
 * replies arriving, the holder releasing (an unlock message), the caller's interrupt
 * ({@link Acquisition#cancel()}), the client closing ({@link Acquisition#abort}) and the wait
 * timing out, in every interleaving of a few of them. Redis is the {@link MemoryStore} (a simple
 * lock on it, whose replies come when the model says); the pub/sub connection, the timer and the
 * clock are stand-ins the model drives; the lock's engine, the acquisition, its unlock
 * channel (reference counts and parking) and the watchdog's records are the real ones. After each interleaving the
 * model lets every reply and timeout still due happen, then checks what must hold however the
 * race went.
 */
class AcquisitionModelTest {

    @Test
    void noInterleavingLeaksAHoldOrASubscriptionOrEndsAnAcquireTwice() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
                .addGuarantee(storeCallsAtomic())
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
    public static class Race extends ModelRace {

        private static final String NAME = "raced";
        private static final String CHANNEL = "redisson_lock__channel:{raced}";
        private static final String OTHER_FIELD = "other:1";
        private static final long OTHER_LEASE = 5_000;

        /**
         * "Redis": the simple lock's scripts, whose waiters take no turns, so a release frees the
         * lock and the next attempt takes it. Another client holds it at first.
         */
        private final MemoryStore store = new MemoryStore();
        /** This client's connection: each call waits for {@link #reply()}. */
        private final MemoryStore.Connection redis = store.deferred();
        private final LockDriver other = store.immediate().simple(NAME, CHANNEL);
        /** Whether this owner held the lock after the last command (read and written under the store). */
        private boolean heldBefore;
        /** Whether Redis gave the lock to this owner in a command run after the interrupt. */
        private volatile boolean wonAfterInterrupt;

        public Race() {
            other.acquire(new Request(OTHER_FIELD, OTHER_LEASE, 0, new Budget(0, 0), false, 0, 0, false));
            store.subscribe(client.channels::onMessage);
            store.afterEachCommand(script -> {
                boolean held = store.holdCount(NAME, FIELD) > 0;
                if (held && !heldBefore && interrupted) {
                    wonAfterInterrupt = true;
                }
                heldBefore = held;
            });
            begin(client.lock(redis.simple(NAME, CHANNEL), NAME, CHANNEL));
        }

        /** Who holds the lock on "Redis": the other client, this owner, or nobody. */
        String holder() {
            Set<String> holders = store.holders(NAME).keySet();
            return holders.isEmpty() ? "nobody" : String.join(",", holders);
        }

        /** Redis runs the oldest call in flight (an acquire: taken if nobody holds the lock, else busy) and answers it. */
        @Operation(nonParallelGroup = "io")
        public void reply() {
            redis.deliver();
        }

        /** The other client unlocks: the key goes, and the unlock message reaches this client's channel. */
        @Operation(nonParallelGroup = "io")
        public void otherReleases() {
            other.release(new Request(OTHER_FIELD, OTHER_LEASE, 1, new Budget(0, 0), false, 0, 0, false));
        }

        /**
         * Lets the acquire run to its end (replies answered, an undo's too, timeouts fired, bounded), then checks:
         * it ended once; an acquire won after the interrupt was undone; the caller's answer
         * matches Redis and the watchdog's records (so one won around a close was undone or
         * reported as held); the channel was given back exactly once; the client no longer lists
         * the wait.
         */
        @Validate
        public void endedOnceWithNothingLeaked() throws Exception {
            for (int step = 0; step < 20 && !(acquisition.result.isDone() && redis.inFlight() == 0); step++) {
                reply();
                timeOut();
            }
            if (!acquisition.result.isDone() || redis.inFlight() > 0) {
                throw new IllegalStateException("the acquire never settled: " + acquisition);
            }
            if (client.ends.get() != 1) {
                throw new IllegalStateException("the acquire ended " + client.ends.get() + " times");
            }
            boolean acquired = !acquisition.result.isCompletedExceptionally() && acquisition.result.get().acquired();
            String held = holder();
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
            if (!client.channelsGivenBack()) {
                throw new IllegalStateException(client.channelsText());
            }
            if (client.anyWaiting()) {
                throw new IllegalStateException("the client still lists the wait");
            }
        }
    }
}
