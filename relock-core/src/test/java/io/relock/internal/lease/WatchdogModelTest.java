package io.relock.internal.lease;

import static io.relock.internal.engine.ModelScenarios.scenario;

import io.relock.HeldLock;
import io.relock.LockObserver;
import io.relock.internal.backend.Renewal;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.ManualTimer;
import io.relock.internal.engine.ModelClient;
import io.relock.internal.support.Args;
import io.relock.internal.support.Observers;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck's model checker over the watchdog's hold registry: one owner acquiring, re-entering
 * and releasing, the timer thread ticking, replies to renewals and to the unlock arriving, Redis
 * dropping the key on its own, and an inspector calling {@code held()}, in every interleaving of
 * a few operations. The watchdog and the lock's engine (its {@link LockEngine#release}) are the
 * real ones, on a model client; Redis is a map. The registry is not a linearizable object (a renewal's answer depends on what
 * happened on Redis meanwhile), so the model records what must never happen and {@code @Validate}
 * checks it after each interleaving.
 */
class WatchdogModelTest {

    @Test
    void noInterleavingReportsAReleasedHoldLostOrALossTwice() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
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
        /** Redis as far as the watchdog sees it: the owner's hold count under the lock's key, absent when not held. */
        private final Map<String, Integer> redis = new ConcurrentHashMap<>();
        /** Renewal calls sent and not answered yet, oldest first. */
        private final ArrayDeque<Pending> pending = new ArrayDeque<>();
        /** Every hold the owner got, in order; a list searched by identity (identity hashes differ between replays). */
        private final List<Fate> fates = new ArrayList<>();
        private final List<String> violations = new ArrayList<>();
        private final Watchdog watchdog;
        private final LockEngine lock;
        /** The owner's hold as its own operations know it (only the owner's thread writes it). */
        private volatile Hold current;

        private record Pending(List<String> fields, CompletableFuture<List<Object>> reply) {}

        public Registry() {
            // Built here rather than read from WriteConfirmation.CONFIRMED: Lincheck cannot restore a
            // record class's static fields between interleavings (Unsafe refuses their offsets).
            WriteConfirmation confirmed = new WriteConfirmation(WriteConfirmation.Outcome.CONFIRMED, 0);
            RenewalGateway gateway = new RenewalGateway() {
                @Override
                public int slotOf(String key) {
                    return 0;
                }

                @Override
                public long connectionEpoch() {
                    return 0;
                }

                @Override
                public CompletableFuture<List<Object>> renew(Renewal script, String[] keys, String[] args) {
                    Pending call = new Pending(List.of(args).subList(1, args.length), new CompletableFuture<>());
                    synchronized (pending) {
                        pending.addLast(call);
                    }
                    return call.reply();
                }

                @Override
                public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
                    return CompletableFuture.completedFuture(confirmed);
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
            // The clock stands still: no lease runs out here, so every loss comes from a renewal answered 0.
            watchdog = new Watchdog(gateway, timer, () -> 0L, 30_000, this::lost,
                    new Observers(List.<LockObserver>of()), () -> { });
            watchdog.start();
            lock = new ModelClient(watchdog).lock(new Driver(), KEY, "channel:" + KEY);
        }

        /** The lock's release script on the map: runs at once, its reply waits for {@link #releaseReplied()}. */
        private final class Driver extends ModelClient.Driver {

            @Override
            public String type() {
                return "reentrant";
            }

            @Override
            public CompletableFuture<Long> release(Request request) {
                Hold hold = current;
                Long outcome;
                synchronized (redis) {
                    Integer count = redis.get(KEY);
                    if (count == null) {
                        outcome = null;
                    } else if (count > 1) {
                        redis.put(KEY, count - 1);
                        outcome = 0L;
                    } else {
                        redis.remove(KEY);
                        fate(hold).released = true;
                        outcome = 1L;
                    }
                }
                CompletableFuture<Long> reply = new CompletableFuture<>();
                releaseInFlight.set(new Release(hold, reply, outcome));
                return reply;
            }

            @Override
            public CompletableFuture<Attempt> acquire(Request request) {
                throw new UnsupportedOperationException("the model acquires by itself");
            }

            @Override
            public CompletableFuture<Long> rollback(String field, int countBefore) {
                throw new UnsupportedOperationException("the model undoes no acquire");
            }
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
            if (releaseInFlight.get() != null) {
                return; // a thread owner is still in unlock()
            }
            int before;
            synchronized (redis) { // a script runs atomically on Redis
                before = redis.getOrDefault(KEY, 0);
                redis.put(KEY, before + 1);
            }
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

        /** A release whose reply has not been handled yet: the hold it releases, its reply, and the script's answer. */
        private record Release(Hold hold, CompletableFuture<Long> reply, Long outcome) {}

        private final AtomicReference<Release> releaseInFlight = new AtomicReference<>();

        /**
         * The owner unlocks by the real {@link LockEngine#release}, whose script runs on Redis at
         * once; its reply is handled later ({@link #releaseReplied()}). A thread owner waits for
         * that, so it does nothing else meanwhile.
         */
        @Operation(nonParallelGroup = "owner")
        public void release() {
            if (current == null || releaseInFlight.get() != null) {
                return;
            }
            lock.release(OWNER);
        }

        /** The release's reply arrives, and the engine settles the watchdog's records by it. */
        @Operation
        public void releaseReplied() {
            Release release = releaseInFlight.get();
            if (release == null) {
                return;
            }
            release.reply().complete(release.outcome());
            if (release.outcome() == null || release.outcome() == 1) {
                current = null;
            }
            releaseInFlight.set(null);
        }

        /** The timer thread's tick: sends the renewals (one tick's worth at most). */
        @Operation(nonParallelGroup = "timer")
        public void tick() throws Exception {
            timer.elapse();
        }

        /** The I/O thread: the oldest renewal call is answered by Redis as it is now. */
        @Operation(nonParallelGroup = "io")
        public void answerRenewal() {
            Pending call;
            synchronized (pending) {
                call = pending.pollFirst();
            }
            if (call == null) {
                return;
            }
            List<Object> reply = new ArrayList<>();
            synchronized (redis) {
                for (String field : call.fields()) {
                    reply.add(field.equals(FIELD) && redis.containsKey(KEY) ? 1L : 0L);
                }
            }
            call.reply().complete(reply);
        }

        /** Redis loses the key on its own (expired during a pause, a failover without it): a real loss. */
        @Operation
        public void expire() {
            Hold hold = current;
            synchronized (redis) {
                if (redis.remove(KEY) != null && hold != null) {
                    fate(hold).expired = true;
                }
            }
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
