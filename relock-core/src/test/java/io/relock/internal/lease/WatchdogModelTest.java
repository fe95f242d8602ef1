package io.relock.internal.lease;

import static io.relock.internal.engine.ModelScenarios.scenario;
import static io.relock.internal.engine.ModelScenarios.storeCallsAtomic;

import io.relock.HeldLock;
import io.relock.LockObserver;
import io.relock.internal.backend.Budget;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.ManualTimer;
import io.relock.internal.engine.ModelClient;
import io.relock.internal.model.MemoryStore;
import io.relock.internal.support.Args;
import io.relock.internal.support.Observers;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck's model checker over the watchdog's hold registry: one owner acquiring, re-entering
 * and releasing, the timer thread ticking, replies to renewals and to the unlock arriving, Redis
 * dropping the key on its own, and an inspector calling {@code held()}, in every interleaving of
 * a few operations. The watchdog and the lock's engine (its {@link LockEngine#release}) are the
 * real ones, on a model client; Redis is the {@link MemoryStore}. The registry is not a
 * linearizable object (a renewal's answer depends on what happened on Redis meanwhile), so the
 * model records what must never happen and {@code @Validate} checks it after each interleaving.
 */
class WatchdogModelTest {

    @Test
    void noInterleavingReportsAReleasedHoldLostOrALossTwice() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
                .addGuarantee(storeCallsAtomic())
                // The answer to a renewal sent before the unlock, before or after the unlock's
                // reply (each order written out: a run explores the other order only now and then).
                .addCustomScenario(scenario(Registry.class, List.of("acquire", "tick", "release"),
                        List.of(List.of("releaseReplied"), List.of("answerRenewal"))))
                .addCustomScenario(scenario(Registry.class, List.of("acquire", "tick", "release"),
                        List.of(List.of("answerRenewal"), List.of("releaseReplied"))))
                // The same from the unlock on, with the owner taking the lock again and an inspector listing holds.
                .addCustomScenario(scenario(Registry.class, List.of("acquire", "tick"),
                        List.of(List.of("release", "acquire"), List.of("answerRenewal", "releaseReplied"),
                                List.of("held"))))
                // A real loss (the key expired) racing a re-entry and a release.
                .addCustomScenario(scenario(Registry.class, List.of("acquire", "tick"),
                        List.of(List.of("acquire", "release"), List.of("expire", "releaseReplied"),
                                List.of("answerRenewal"))))
                .check(Registry.class);
    }

    /** The model Lincheck drives; a fresh instance per interleaving. */
    public static class Registry {

        private static final String KEY = "model";
        private static final long OWNER = 1;
        private static final String FIELD = "client:1";
        private static final long LEASE_MILLIS = 30_000;

        /** How one hold's entry left Redis, as far as the model made it. */
        private static final class Fate {
            final Hold hold;
            boolean released;
            boolean expired;
            int toldLost;

            Fate(Hold hold) {
                this.hold = hold;
            }
        }

        private final ManualTimer timer = new ManualTimer();
        /** "Redis": the reentrant lock's scripts on one key. */
        private final MemoryStore store = new MemoryStore();
        /** The owner's connection: a release runs on Redis at once, its reply waits for {@link #releaseReplied()}. */
        private final MemoryStore.Connection ownerConnection = store.deferred();
        /** The watchdog's connection: a renewal runs on Redis as it is at {@link #answerRenewal()}. */
        private final MemoryStore.Connection renewals = store.deferred();
        /** How the model acquires: a script call that runs at once. */
        private final LockDriver acquirer = store.immediate().reentrant(KEY, "channel:" + KEY);
        /** Every hold the owner got, in order; a list searched by identity (identity hashes differ between replays). */
        private final List<Fate> fates = new ArrayList<>();
        private final List<String> violations = new ArrayList<>();
        private final Watchdog watchdog;
        private final LockEngine lock;
        /** The owner's hold as its own operations know it (only the owner's thread writes it). */
        private volatile Hold current;
        /** The owner's hold count on Redis after the last command (read and written under the store). */
        private int countBefore;

        public Registry() {
            // The clock stands still: no lease runs out here, so every loss comes from a renewal answered 0.
            watchdog = new Watchdog(renewals.renewals(), timer, () -> 0L, 30_000, this::lost,
                    new Observers(List.<LockObserver>of()), () -> { });
            watchdog.start();
            lock = new ModelClient(watchdog).lock(ownerConnection.reentrant(KEY, "channel:" + KEY), KEY, "channel:" + KEY);
            store.afterEachCommand(this::ran);
        }

        /** After each command on "Redis": a release that took the owner's last hold released the hold it was sent for. */
        private void ran(String script) {
            int count = store.holdCount(KEY, FIELD);
            if (script.equals("lock_release") && countBefore > 0 && count == 0) {
                fate(current).released = true;
            }
            countBefore = count;
        }

        private synchronized Fate fate(Hold hold) {
            for (Fate fate : fates) {
                if (fate.hold == hold) {
                    return fate;
                }
            }
            Fate fate = new Fate(hold);
            fates.add(fate);
            return fate;
        }

        private synchronized boolean seen(Hold hold) {
            return fates.stream().anyMatch(fate -> fate.hold == hold);
        }

        private synchronized void violated(String what) {
            violations.add(what);
        }

        private void lost(Hold hold, Throwable cause) {
            Fate fate = fate(hold);
            synchronized (this) {
                fate.toldLost++;
                if (fate.released && !fate.expired) {
                    violations.add("a hold whose key its own release removed was reported lost");
                }
            }
        }

        /** The owner acquires (or re-enters), as an acquire script and then the engine's bookkeeping do. */
        @Operation(nonParallelGroup = "owner")
        public void acquire() {
            if (ownerConnection.inFlight() > 0) {
                return; // a thread owner is still in unlock()
            }
            // The script and the count it left, with nothing between (as a script runs on Redis).
            int before = store.atomically(() -> {
                acquirer.acquire(new Request(FIELD, LEASE_MILLIS, 0, new Budget(0, 0), false, 0, 0, false));
                return store.holdCount(KEY, FIELD);
            }) - 1;
            Hold previous = current;
            Hold hold = watchdog.acquired(lock, OWNER, FIELD, Args.WATCHDOG_LEASE,
                    before + 1, null);
            synchronized (this) {
                if (previous == null && seen(hold)) {
                    violations.add("an acquire after the hold was forgotten got an old hold back");
                }
                if (before > 0 && previous != null && !previous.lost && hold != previous) {
                    violations.add("a re-entry replaced a live hold");
                }
            }
            fate(hold);
            current = hold;
        }

        /**
         * The owner unlocks by the real {@link LockEngine#release}, whose script runs on Redis at
         * once; its reply is handled later ({@link #releaseReplied()}). A thread owner waits for
         * that, so it does nothing else meanwhile.
         */
        @Operation(nonParallelGroup = "owner")
        public void release() {
            if (current == null || ownerConnection.inFlight() > 0) {
                return;
            }
            lock.release(OWNER);
            ownerConnection.apply();
        }

        /** The release's reply arrives, and the engine settles the watchdog's records by it. */
        @Operation
        public void releaseReplied() {
            MemoryStore.Replied release = ownerConnection.reply();
            if (release != null && (release.value() == null || release.value().equals(1L))) {
                current = null;
            }
        }

        /** The timer thread's tick: sends the renewals (one tick's worth at most). */
        @Operation(nonParallelGroup = "timer")
        public void tick() throws Exception {
            timer.elapse();
        }

        /** The I/O thread: the oldest renewal call runs on Redis as it is now, and is answered. */
        @Operation(nonParallelGroup = "io")
        public void answerRenewal() {
            renewals.deliver();
        }

        /** Redis loses the key on its own (it expired during a pause: the store's clock passes the lease): a real loss. */
        @Operation
        public void expire() {
            Hold hold = current;
            store.atomically(() -> {
                boolean held = store.holdCount(KEY, FIELD) > 0;
                store.advance(LEASE_MILLIS + 1);
                if (held && hold != null) {
                    fate(hold).expired = true;
                }
                countBefore = 0;
                return null;
            });
        }

        /** An inspector lists the holds meanwhile: at most the one owner's, never with a count of 0. */
        @Operation
        public void held() {
            List<HeldLock> held = watchdog.held();
            if (held.size() > 1 || held.stream().anyMatch(h -> h.holdCount() <= 0)) {
                violated("held() listed " + held);
            }
        }

        @Validate
        public void everyLossIsRealAndToldOnce() {
            synchronized (this) {
                if (!violations.isEmpty()) {
                    throw new IllegalStateException(String.join("; ", violations));
                }
                for (Fate fate : fates) {
                    if (fate.toldLost > 1) {
                        throw new IllegalStateException("a loss was told " + fate.toldLost + " times");
                    }
                    if (fate.hold.lost != (fate.toldLost == 1)) {
                        throw new IllegalStateException("lost=" + fate.hold.lost + " but told " + fate.toldLost
                                + " times");
                    }
                }
            }
        }
    }
}
