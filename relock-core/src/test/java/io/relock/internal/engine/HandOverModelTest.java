package io.relock.internal.engine;

import static io.relock.internal.engine.ModelScenarios.scenario;

import io.relock.internal.backend.Budget;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.HandedOver;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Args;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * stale, the caller's interrupt, the client closing and the wait timing out. Redis is a model of
 * one lock key and its queue; the lock's engine (the acquisition, and the holder's release:
 * hand-over or through Redis), its turn and channel, the claim and the watchdog's records are
 * real. After each interleaving every reply and timeout still due happens, then the history is
 * checked: the caller was told it holds only if Redis gives it the lock or its hold was reported
 * lost (never two holders unreported); a caller told it does not hold leaves nothing held and no
 * entry queued; the acquire ended once and gave its subscription back; the holder's release ended
 * without an error.
 */
class HandOverModelTest {

    @Test
    void aHandOffFromAnotherClientNeverMakesAnUnreportedSecondHolder() {
        new ModelCheckingOptions().iterations(2).invocationsPerIteration(150).threads(3).actorsPerThread(2)
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
        final LockEngine lock = client.lock(new Driver(), NAME, CHANNEL);
        /** Who holds the lock on "Redis": "other" (another client), "local" (another owner here), FIELD, or "nobody". */
        String holder; // guarded by this
        /** The ticket the lock was handed to and not yet claimed, or 0. */
        long granted; // guarded by this
        /** Tickets of this acquisition queued on "Redis", oldest first. */
        final Set<Long> queue = new LinkedHashSet<>(); // guarded by this
        /** Calls sent on the one connection and not run yet, oldest first: Redis runs them in order. */
        private final ArrayDeque<Call<?>> pending = new ArrayDeque<>(); // guarded by this

        /**
         * A call: what it does on Redis (run under the race's monitor, atomically), its reply, and
         * the unlock message it publishes, if any, delivered once the reply was handled.
         */
        private record Call<T>(Supplier<T> onRedis, CompletableFuture<T> reply, Supplier<String> published) {

            void run(Object redis, UnlockChannels channels) {
                T value;
                String message;
                synchronized (redis) {
                    value = onRedis.get();
                    message = published.get();
                }
                reply.complete(value);
                if (message != null) {
                    channels.onMessage(CHANNEL, message);
                }
            }
        }
        /** Whether the lock was given to this acquisition after the interrupt. */
        volatile boolean wonAfterInterrupt;
        /** Whether the interrupt came before the release under way began (a release decides then). */
        volatile boolean releaseAfterInterrupt;

        Race(String firstHolder) {
            holder = firstHolder;
        }

        /** The reentrant lock's scripts on a model of one key and its queue. */
        private final class Driver extends ModelClient.Driver {

            @Override
            public String type() {
                return "reentrant";
            }

            @Override
            public boolean takesTurns() {
                return true;
            }

            /**
             * lock_hand_over.lua on the model: the local owner's one hold goes to {@code to}. The
             * release chose its waiter as it called this, so a release begun after the interrupt
             * gives the lock to an acquire after the interrupt.
             */
            @Override
            public CompletableFuture<HandedOver> handOver(String from, String to, long leaseMillis, long toTicket,
                    boolean countOthers, Budget budget) {
                synchronized (Race.this) {
                    wonAfterInterrupt |= releaseAfterInterrupt;
                }
                return send(() -> {
                    if (!holder.equals("local")) {
                        return new HandedOver(-1, 0);
                    }
                    holder = to;
                    queue.remove(toTicket);
                    return new HandedOver(queue.size(), 0);
                });
            }

            /**
             * lock_release.lua on the model, for the local owner's last hold: granted to the first
             * queued ticket (published), else freed (the unlock message published); a hold that is
             * gone answers nil.
             */
            @Override
            public CompletableFuture<Long> release(Request request) {
                String[] published = new String[1];
                return send(() -> {
                    if (!holder.equals("local") || !request.field().equals(LOCAL_FIELD)) {
                        return null;
                    }
                    long ticket = queue.isEmpty() ? 0 : queue.iterator().next();
                    if (ticket != 0) {
                        queue.remove(ticket);
                        holder = FIELD;
                        granted = ticket;
                        wonAfterInterrupt |= interrupted;
                        published[0] = Long.toString(ticket);
                    } else {
                        holder = "nobody";
                        published[0] = UnlockChannels.UNLOCK_MESSAGE;
                    }
                    return 1L;
                }, () -> published[0]);
            }

            @Override
            public CompletableFuture<Attempt> acquire(Request request) {
                return send(() -> acquired(request));
            }

            @Override
            public CompletableFuture<Long> rollback(String field, int countBefore) {
                return send(() -> {
                    if (holder.equals(field)) {
                        holder = "nobody";
                        granted = 0;
                        return 1L;
                    }
                    return 0L;
                });
            }

            @Override
            public CompletableFuture<?> abandon(String field, long ticket) {
                return send(() -> {
                    queue.remove(ticket);
                    if (ticket != 0 && granted == ticket) {
                        // lock_leave.lua: a hand-off that reached the leaving waiter is passed on.
                        granted = 0;
                        holder = "nobody";
                    }
                    return null;
                });
            }
        }

        /** Queues a call; Redis runs it, and its reply comes, at a later {@link #reply()}. */
        private <T> CompletableFuture<T> send(Supplier<T> onRedis) {
            return send(onRedis, () -> null);
        }

        private <T> CompletableFuture<T> send(Supplier<T> onRedis, Supplier<String> published) {
            CompletableFuture<T> reply = new CompletableFuture<>();
            synchronized (this) {
                pending.addLast(new Call<>(onRedis, reply, published));
            }
            return reply;
        }

        /** lock_acquire.lua on the model, under this. */
        private Attempt acquired(Request request) {
            if (holder.equals("nobody")) {
                holder = FIELD;
                queue.remove(request.queuedTicket());
                wonAfterInterrupt |= interrupted;
                return Attempt.acquired(0);
            }
            if (holder.equals(FIELD) && request.queuedTicket() != 0 && granted == request.queuedTicket()) {
                granted = 0;
                return Attempt.acquired(0);
            }
            if (holder.equals(FIELD)) {
                throw new IllegalStateException("an acquire while this owner holds the lock: " + request);
            }
            queue.remove(request.queuedTicket());
            if (request.ticket() != 0) {
                queue.add(request.ticket());
            }
            return Attempt.busy(5_000);
        }

        /** Redis runs the oldest call sent and answers it. */
        @Operation(nonParallelGroup = "io")
        public void reply() {
            Call<?> call;
            synchronized (this) {
                call = pending.pollFirst();
            }
            if (call != null) {
                call.run(this, client.channels);
            }
        }

        /**
         * Lets the acquire run to its end, then checks the history: told it holds only if Redis
         * gives it the lock or the hold was reported lost; told it does not hold, nothing of it
         * is held or queued; an acquire won after the interrupt was not kept; one end, every
         * subscription given back, the wait no longer listed.
         */
        void checkHistory() throws Exception {
            for (int step = 0; step < 20 && !(acquisition.result.isDone() && nothingPending()); step++) {
                reply();
                timeOut();
            }
            if (!acquisition.result.isDone() || !nothingPending()) {
                throw new IllegalStateException("the acquire never settled: " + acquisition);
            }
            if (client.ends.get() != 1) {
                throw new IllegalStateException("the acquire ended " + client.ends.get() + " times");
            }
            boolean acquired = !acquisition.result.isCompletedExceptionally() && acquisition.result.get().acquired();
            Hold hold = client.watchdog.get(lock, OWNER);
            synchronized (this) {
                if (acquired) {
                    if (hold == null) {
                        throw new IllegalStateException("told acquired, but the watchdog tracks no hold");
                    }
                    if (!hold.lost && !(holder.equals(FIELD) && granted == 0)) {
                        throw new IllegalStateException("told acquired and not lost, but Redis: holder " + holder
                                + ", unclaimed hand-off " + granted);
                    }
                    if (wonAfterInterrupt) {
                        throw new IllegalStateException("an acquire that won after the interrupt was kept");
                    }
                } else {
                    if (holder.equals(FIELD)) {
                        throw new IllegalStateException("told not acquired, but Redis gives it the lock");
                    }
                    if (!queue.isEmpty()) {
                        throw new IllegalStateException("told not acquired, but still queued: " + queue);
                    }
                    if (hold != null) {
                        throw new IllegalStateException("told not acquired, but the watchdog tracks a hold");
                    }
                }
            }
            if (!client.channelsGivenBack()) {
                throw new IllegalStateException(client.channelsText());
            }
            if (client.anyWaiting()) {
                throw new IllegalStateException("the client still lists the wait");
            }
        }

        private synchronized boolean nothingPending() {
            return pending.isEmpty();
        }
    }

    /** Another client holds the lock; its release hands it to this acquisition's queued ticket. */
    public static class FromAnotherClient extends Race {

        public FromAnotherClient() {
            super("other");
            begin(lock);
        }

        @Validate
        public void noUnreportedHolderAndNothingLeft() throws Exception {
            checkHistory();
        }

        /** The other client's release: to the first queued ticket (published), else to nobody (0). */
        @Operation(runOnce = true)
        public void holderHandsOff() {
            long ticket;
            synchronized (this) {
                if (!holder.equals("other")) {
                    return;
                }
                ticket = queue.isEmpty() ? 0 : queue.iterator().next();
                if (ticket != 0) {
                    queue.remove(ticket);
                    holder = FIELD;
                    granted = ticket;
                    wonAfterInterrupt |= interrupted;
                } else {
                    holder = "nobody";
                }
            }
            client.channels.onMessage(CHANNEL, ticket != 0 ? Long.toString(ticket) : UnlockChannels.UNLOCK_MESSAGE);
        }

        /** The hand-over lease runs out unclaimed, and another client takes the lock. */
        @Operation(runOnce = true)
        public void handOffLapses() {
            synchronized (this) {
                if (granted != 0) {
                    granted = 0;
                    holder = "other";
                }
            }
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
            super("local");
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
