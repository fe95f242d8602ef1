package io.relock.internal.engine;

import static io.relock.internal.engine.ModelScenarios.scenario;
import static io.relock.internal.engine.ModelScenarios.storeCallsAtomic;

import io.relock.internal.backend.Budget;
import io.relock.internal.backend.Grants;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.lease.Hold;
import io.relock.internal.model.MemoryStore;
import io.relock.internal.support.Args;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck's model checker over one {@link Acquisition} of a lock that hands off, racing the two
 * ways a hold comes to it without an attempt of its own: a release of another client handing the
 * lock to its queued ticket (claimed without waiting while the ticket is fresh), and a release of
 * another owner of the same client handing its hold straight over. Against them: replies, the
 * hand-over lease lapsing (and another client taking the lock), a pause that makes the ticket
 * stale, the caller's interrupt, the client closing and the wait timing out. Redis is the
 * {@link MemoryStore} (the reentrant lock's scripts on one key and its queue); the lock's engine
 * (the acquisition, and the holder's release: hand-over or through Redis), its turn and channel,
 * the claim and the watchdog's records are real. After each interleaving every reply and timeout still due happens, then the history is
 * checked: the caller was told it holds only if Redis gives it the lock or its hold was reported
 * lost (never two holders unreported); a caller told it does not hold leaves nothing held and no
 * entry queued; the acquire ended once and gave its subscription back; the holder's release ended
 * without an error.
 */
class HandOverModelTest {

    @Test
    void aHandOffFromAnotherClientNeverMakesAnUnreportedSecondHolder() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
                .addGuarantee(storeCallsAtomic())
                // Queued and parked: the hand-off races the interrupt and the close.
                .addCustomScenario(scenario(FromAnotherClient.class, List.of("reply", "reply"),
                        List.of(List.of("holderHandsOff"), List.of("interrupt"), List.of("close"))))
                // The hand-off while the queueing attempt's reply is still on its way.
                .addCustomScenario(scenario(FromAnotherClient.class, List.of("reply"),
                        List.of(List.of("holderHandsOff", "reply"), List.of("timeOut"))))
                // A pause makes the ticket stale while the hand-over lease lapses.
                .addCustomScenario(scenario(FromAnotherClient.class, List.of("reply", "reply"),
                        List.of(List.of("holderHandsOff", "handOffLapses"), List.of("pause", "reply"),
                                List.of("interrupt"))))
                .check(FromAnotherClient.class);
    }

    @Test
    void aHandOverWithinTheClientNeverLeavesAHoldNobodyKnowsOf() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
                .addGuarantee(storeCallsAtomic())
                // Parked behind the client's holder: its release races the interrupt and the close.
                .addCustomScenario(scenario(WithinTheClient.class, List.of(),
                        List.of(List.of("ownerReleases"), List.of("interrupt"), List.of("close"))))
                .addCustomScenario(scenario(WithinTheClient.class, List.of(),
                        List.of(List.of("ownerReleases", "reply"), List.of("timeOut"), List.of("reply"))))
                .check(WithinTheClient.class);
    }

    /** A lock held by someone else at first, and one acquisition of this client waiting for it. */
    abstract static class Race extends ModelRace {

        static final String NAME = "handed";
        static final String CHANNEL = "redisson_lock__channel:{handed}";
        static final long LOCAL_OWNER = 8;
        static final String LOCAL_FIELD = "client:8";
        static final String OTHER_FIELD = "other:1";
        /** The first holder's lease: what a busy attempt is told is left (the store's clock moves only by a lapse). */
        static final long LEASE = 5_000;
        /** "Redis": the reentrant lock's scripts, one key and its queue. */
        final MemoryStore store = new MemoryStore();
        /** This client's connection, on which Redis runs the calls in order, each at a {@link #reply()}. */
        final MemoryStore.Connection redis = store.deferred();
        /** Another client's connection: its calls run at once. */
        final LockDriver other = store.immediate().reentrant(NAME, CHANNEL);
        final LockEngine lock = client.lock(redis.reentrant(NAME, CHANNEL), NAME, CHANNEL);
        /** Whether this owner held the lock after the last command (read and written under the store). */
        private boolean heldBefore;
        /** What went wrong on "Redis" as the commands ran. */
        private final List<String> violations = new ArrayList<>(); // guarded by the store
        /** Whether the lock was given to this acquisition after the interrupt. */
        volatile boolean wonAfterInterrupt;
        /** Whether the interrupt came before the release under way began (a release decides then). */
        volatile boolean releaseAfterInterrupt;

        /** {@code firstHolder} holds the lock, with {@link #LEASE}. */
        Race(String firstHolder) {
            store.immediate().reentrant(NAME, CHANNEL).acquire(request(firstHolder, 0));
            store.subscribe(client.channels::onMessage);
            store.afterEachCommand(this::ran);
        }

        static Request request(String field, int holdsBefore) {
            return new Request(field, LEASE, holdsBefore, new Budget(0, 0), false, 0, 0, false);
        }

        /**
         * After each command on "Redis": a hand-over gives the lock to an acquire after the
         * interrupt if its release began after it (the release chose its waiter then); any other
         * command that gives this owner the lock does so if it ran after the interrupt. An acquire
         * of this owner while it holds the lock (other than the claim of a grant) is a violation.
         */
        private void ran(String script) {
            int count = store.holdCount(NAME, FIELD);
            boolean held = count > 0;
            if (script.equals("lock_hand_over")) {
                wonAfterInterrupt |= releaseAfterInterrupt;
            } else if (held && !heldBefore) {
                wonAfterInterrupt |= interrupted;
            }
            if (script.equals("lock_acquire") && heldBefore && count > 1) {
                violations.add("an acquire while this owner holds the lock: count " + count);
            }
            heldBefore = held;
        }

        /** Redis runs the oldest call sent and answers it. */
        @Operation(nonParallelGroup = "io")
        public void reply() {
            redis.deliver();
        }

        /**
         * Lets the acquire run to its end, then checks the history: told it holds only if Redis
         * gives it the lock or the hold was reported lost; told it does not hold, nothing of it
         * is held or queued; an acquire won after the interrupt was not kept; one end, every
         * subscription given back, the wait no longer listed.
         */
        void checkHistory() throws Exception {
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
            Hold hold = client.watchdog.get(lock, OWNER);
            store.atomically(() -> {
                if (!violations.isEmpty()) {
                    throw new IllegalStateException(String.join("; ", violations));
                }
                boolean holds = store.holdCount(NAME, FIELD) > 0;
                String granted = store.granted(NAME);
                if (acquired) {
                    if (hold == null) {
                        throw new IllegalStateException("told acquired, but the watchdog tracks no hold");
                    }
                    if (!hold.lost && !(holds && granted == null)) {
                        throw new IllegalStateException("told acquired and not lost, but Redis: holders "
                                + store.holders(NAME) + ", unclaimed hand-off " + granted);
                    }
                    if (wonAfterInterrupt) {
                        throw new IllegalStateException("an acquire that won after the interrupt was kept");
                    }
                } else {
                    if (holds) {
                        throw new IllegalStateException("told not acquired, but Redis gives it the lock");
                    }
                    List<String> queued = store.queue(NAME).stream().filter(member -> member.startsWith(FIELD + ":"))
                            .toList();
                    if (!queued.isEmpty()) {
                        throw new IllegalStateException("told not acquired, but still queued: " + queued);
                    }
                    if (hold != null) {
                        throw new IllegalStateException("told not acquired, but the watchdog tracks a hold");
                    }
                }
                return null;
            });
            if (!client.channelsGivenBack()) {
                throw new IllegalStateException(client.channelsText());
            }
            if (client.anyWaiting()) {
                throw new IllegalStateException("the client still lists the wait");
            }
        }
    }

    /** Another client holds the lock; its release hands it to this acquisition's queued ticket. */
    public static class FromAnotherClient extends Race {

        public FromAnotherClient() {
            super(OTHER_FIELD);
            begin(lock);
        }

        @Validate
        public void noUnreportedHolderAndNothingLeft() throws Exception {
            checkHistory();
        }

        /**
         * The other client's release (lock_release.lua): granted to the first queued ticket, which
         * is published, else freed (the unlock message); nothing if it no longer holds the lock.
         */
        @Operation(runOnce = true)
        public void holderHandsOff() {
            other.release(request(OTHER_FIELD, 1));
        }

        /** The grant's lease runs out unclaimed (the store's clock passes it), and another client takes the lock. */
        @Operation(runOnce = true)
        public void handOffLapses() {
            store.atomically(() -> {
                if (store.granted(NAME) != null) {
                    store.advance(Grants.LEASE_MILLIS + 1);
                    other.acquire(request(OTHER_FIELD, 0));
                }
                return null;
            });
        }

        /** The waiter's process stands still longer than the fast-claim window (a GC pause). */
        @Operation(runOnce = true)
        public void pause() {
            client.clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(Acquisition.GRANT_LEASE_MILLIS));
        }
    }

    /** Another owner of this client holds the lock; the acquisition parks behind it. */
    public static class WithinTheClient extends Race {

        /** The holder's release, once it began. */
        private volatile CompletableFuture<Void> released;

        public WithinTheClient() {
            super(LOCAL_FIELD);
            client.watchdog.acquired(lock, LOCAL_OWNER, LOCAL_FIELD, Args.WATCHDOG_LEASE, 1, null);
            begin(lock);
        }

        @Validate
        public void noHoldNobodyKnowsOfAndNothingLeft() throws Exception {
            checkHistory();
        }

        /**
         * The holder's last release, by the real {@link LockEngine#release}: handed over to the
         * parked waiter if its turn takes one (the hand-over then runs on "Redis" at a later
         * reply), else through "Redis" to nobody, the unlock message following its reply.
         */
        @Operation(runOnce = true)
        public void ownerReleases() {
            releaseAfterInterrupt = interrupted;
            released = lock.release(LOCAL_OWNER);
        }

        /** Also: the holder's release ended without an error (a hold lost is reported, not thrown). */
        @Override
        void checkHistory() throws Exception {
            super.checkHistory();
            if (released != null && (!released.isDone() || released.isCompletedExceptionally())) {
                throw new IllegalStateException("the holder's release did not end well: " + released);
            }
        }
    }
}
