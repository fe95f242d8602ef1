package io.relock.internal.multi;

import io.relock.DistributedLock;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.RelockException;
import io.relock.internal.ClientRuntime;
import io.relock.internal.engine.LockClient;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redlock over N independent masters, one member lock (and client) per master. Members are
 * asked at the same time, not in turn, so one slow or dead node costs its timeout once, not
 * once per position. The lock is acquired when a majority (N/2+1) answered "acquired" and the
 * lease left after the time spent, minus a clock-drift allowance, is still positive. Otherwise
 * every member is released again, including members whose answer arrives late.
 *
 * <p><b>Majority, then background.</b> An unlock completes once a majority of members confirmed
 * the release; a failed acquire reports its failure without waiting for the release of what it
 * won. The other members' releases finish in the background, retried a bounded number of times
 * ({@value #RELEASE_RETRIES}) when one fails, after which the member's hold is left to its lease.
 * A late release can never free another owner's hold: every member release is owner-checked
 * (it names this owner's field). Nor can it take off a newer hold of the same owner: the
 * RedLock's operations on one member for one owner run in a <em>lane</em>, one after another,
 * so an acquire of that owner on a slow member is sent only once the release before it there
 * (with its retries) has ended. The lanes are kept per client, lock key and owner, whichever
 * RedLock object started the operation. A slow member does not fall ever further behind an owner
 * that locks and unlocks quickly: an unlock whose acquire there was not sent yet cancels it.
 */
public final class RedLock extends CompositeLock {

    /** How many times a member's release that failed is tried again once the unlock is decided. */
    static final int RELEASE_RETRIES = 3;
    /** The pause before the first retry of a member's release; it doubles with each retry. */
    private static final long RELEASE_RETRY_PAUSE_MILLIS = 200;

    private static final Logger LOG = LoggerFactory.getLogger(RedLock.class);

    /** The lanes with an operation under way (see the class comment and {@link #inLane}). */
    private static final Map<LaneKey, Lane> LANES = new ConcurrentHashMap<>();

    private final int quorum;
    private final ClientRuntime home;
    private final Map<Long, Watch> watches = new ConcurrentHashMap<>();

    public RedLock(ClientRuntime home, DistributedLock... locks) {
        super("redlock", locks);
        this.home = home;
        for (int i = 1; i < members.size(); i++) {
            Args.require(members.get(i - 1).client != members.get(i).client,
                    "two members use the same client: RedLock needs one client per master");
        }
        this.quorum = members.size() / 2 + 1;
    }

    // ---- acquiring ----------------------------------------------------------------------------

    /**
     * Rounds of one attempt on every member until a round wins a majority or the wait is over.
     * Between rounds a losing contender has released everything and pauses for a random,
     * growing delay (the Redlock way), so contenders that split the members cannot deadlock.
     */
    @Override
    protected CompletableFuture<Boolean> acquireAsync(long owner, long waitNanos, long leaseMillis) {
        return start(owner, waitNanos, leaseMillis).result;
    }

    /**
     * Watches one owner's hold: counts the members its clients report lost and, once no
     * majority can be left, tells the listeners of the client that made this RedLock.
     */
    private final class Watch {

        private final long owner;
        private final Set<LockEngine> lost = ConcurrentHashMap.newKeySet();
        private final Map<LockEngine, LockListener> listeners = new java.util.HashMap<>();
        private final AtomicBoolean told = new AtomicBoolean();
        private int holds; // guarded by watches' compute

        Watch(long owner) {
            this.owner = owner;
            for (LockEngine member : members) {
                LockListener listener = event -> {
                    if (event.ownerThreadId() == owner && event.lockName().equals(member.getName())) {
                        memberLost(member, event.cause());
                    }
                };
                listeners.put(member, listener);
                member.client.addListener(listener);
            }
        }

        private void memberLost(LockEngine member, Throwable cause) {
            lost.add(member);
            if (members.size() - lost.size() < quorum && told.compareAndSet(false, true)) {
                home.publishLost(new LockLostEvent(getName(), owner, cause));
            }
        }

        void stop() {
            listeners.forEach((member, listener) -> member.client.removeListener(listener));
        }
    }

    /** A RedLock's hold is lost once no majority of its members can be left: its client tells. */
    @Override
    public ListenerRegistration addLostListener(long ownerId, LockListener listener) {
        return home.addLostListener(getName(), ownerId, listener);
    }

    private void watch(long owner) {
        watches.compute(owner, (key, watch) -> {
            Watch current = watch != null ? watch : new Watch(owner);
            current.holds++;
            return current;
        });
    }

    private void unwatch(long owner) {
        watches.computeIfPresent(owner, (key, watch) -> {
            if (--watch.holds > 0) {
                return watch;
            }
            watch.stop();
            return null;
        });
    }

    @Override
    protected boolean acquire(long waitNanos, long leaseMillis) throws InterruptedException {
        return await(start(LockEngine.currentThreadId(), waitNanos, leaseMillis));
    }

    private Acquire start(long owner, long waitNanos, long leaseMillis) {
        Acquire acquire = new Acquire(owner, waitNanos, leaseMillis);
        acquire.nextRound();
        return acquire;
    }

    /** One acquire: a sequence of rounds sharing one deadline. */
    private final class Acquire {

        final CompletableFuture<Boolean> result = new CompletableFuture<>();
        final long owner;
        private final long waitNanos;
        private final long leaseMillis;
        private final long startNanos = clock();
        private int rounds;
        private volatile Round current;
        private volatile boolean abandoned;

        Acquire(long owner, long waitNanos, long leaseMillis) {
            this.owner = owner;
            this.waitNanos = waitNanos;
            this.leaseMillis = leaseMillis;
        }

        void nextRound() {
            Round round = new Round(owner, leaseMillis);
            current = round;
            // A node that does not answer costs at most this much per round. It gets the whole
            // command timeout, whatever the wait left: a node only slower than a short wait (a
            // loaded machine) is not down, and a round decided without it would report trouble.
            long nodeTimeout = members.get(0).client.commandTimeoutMillis();
            for (LockEngine member : members) {
                inLane(member, owner, new Operation(Kind.ACQUIRE, () -> {
                    CompletableFuture<LockDriver.Attempt> attempt =
                            start(() -> member.acquireAsync(owner, 0, leaseMillis));
                    attempt.whenComplete((answer, error) -> round.answered(member, answer, error));
                    return attempt;
                }, () -> round.answered(member, LockDriver.Attempt.fromTtl(-2L), null)));
            }
            timer().newTimeout(t -> round.deadline(), nodeTimeout, TimeUnit.MILLISECONDS);
            if (abandoned) {
                round.abandon();
            }
            round.decision.whenComplete((won, error) -> afterRound(round, won, error));
        }

        private void afterRound(Round round, Boolean won, Throwable error) {
            if (Boolean.TRUE.equals(won)) {
                watch(owner);
                result.complete(true);
                return;
            }
            long left = waitNanos - (clock() - startNanos);
            if (abandoned || left <= 0) {
                if (error != null) {
                    result.completeExceptionally(error);
                } else {
                    result.complete(false);
                }
                return;
            }
            long ceiling = Math.min(200, 10L << Math.min(rounds++, 5));
            long pause = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
            timer().newTimeout(t -> nextRound(), Math.max(1, Math.min(pause, TimeUnit.NANOSECONDS.toMillis(left))),
                    TimeUnit.MILLISECONDS);
        }

        void abandon() {
            abandoned = true;
            Round round = current;
            if (round != null) {
                round.abandon();
            }
        }
    }

    private io.netty.util.Timer timer() {
        return members.get(0).client.timer();
    }

    /** The bookkeeping of one round: one attempt on every member. */
    private final class Round {

        final CompletableFuture<Boolean> decision = new CompletableFuture<>();
        private final long owner;
        private final long leaseMillis;
        private final long startNanos = clock();
        private final AtomicInteger acquired = new AtomicInteger();
        private final AtomicInteger busy = new AtomicInteger();
        private final AtomicInteger failed = new AtomicInteger();
        private final List<LockEngine> held = new ArrayList<>();
        private final List<Throwable> errors = new ArrayList<>();
        private boolean decided; // guarded by this
        private boolean won; // guarded by this

        Round(long owner, long leaseMillis) {
            this.owner = owner;
            this.leaseMillis = leaseMillis;
        }

        void answered(LockEngine member, LockDriver.Attempt attempt, Throwable error) {
            if (error != null) {
                synchronized (this) {
                    errors.add(Exceptions.unwrap(error));
                }
                failed.incrementAndGet();
            } else if (attempt.acquired()) {
                boolean lost;
                synchronized (this) {
                    lost = decided && !won;
                    if (!lost) {
                        held.add(member);
                    }
                }
                if (lost) {
                    release(member); // a late "yes" after the round was lost
                    return;
                }
                acquired.incrementAndGet();
            } else {
                busy.incrementAndGet();
            }
            evaluate(false);
        }

        void deadline() {
            evaluate(true);
        }

        private void evaluate(boolean timeUp) {
            int yes = acquired.get();
            int no = busy.get() + failed.get();
            if (yes >= quorum) {
                long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(clock() - startNanos);
                long lease = members.get(0).client.watchdog().leaseFor(leaseMillis);
                // Redlock's validity: what is left of the lease once the time spent and the
                // possible drift between the nodes' clocks are taken off.
                long drift = lease / 100 + 2;
                decide(lease - elapsedMillis - drift > 0, null);
            } else if (members.size() - no < quorum || timeUp || yes + no == members.size()) {
                decide(false, busy.get() == 0 ? noMajority(yes) : null);
            }
        }

        private RelockException noMajority(int yes) {
            RelockException failure = new RelockException(getName() + ": no majority of " + members.size()
                    + " nodes could be locked (" + yes + " acquired, " + failed.get() + " failed, "
                    + (members.size() - yes - busy.get() - failed.get()) + " did not answer in time; "
                    + quorum + " needed)");
            synchronized (this) {
                errors.forEach(failure::addSuppressed);
            }
            return failure;
        }

        /** Gives up (e.g. the caller was interrupted): what was or will be acquired is released. */
        void abandon() {
            decide(false, null);
        }

        private void decide(boolean success, RelockException failure) {
            List<LockEngine> toRelease;
            synchronized (this) {
                if (decided) {
                    return;
                }
                decided = true;
                won = success;
                toRelease = success ? List.of() : List.copyOf(held);
            }
            toRelease.forEach(this::release);
            if (failure != null) {
                decision.completeExceptionally(failure);
            } else {
                decision.complete(success);
            }
        }

        /** The rollback of a member this round won: in the background, retried (see the class comment). */
        private void release(LockEngine member) {
            releaseInBackground(member, owner, Kind.ROLLBACK, CompletableFuture.completedFuture(true), error -> { },
                    () -> { });
        }
    }

    private boolean await(Acquire acquire) throws InterruptedException {
        try {
            return acquire.result.get();
        } catch (ExecutionException e) {
            throw Exceptions.translate("acquire " + getName(), e);
        } catch (InterruptedException e) {
            acquire.abandon();
            try {
                if (acquire.result.get(members.get(0).client.commandTimeoutMillis() * 2,
                        TimeUnit.MILLISECONDS)) {
                    // Won just before the interrupt was seen: give it back, the caller gets the interrupt.
                    Futures.await(unlockAsync(acquire.owner).toCompletableFuture(), "unlock " + getName());
                }
            } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException settle) {
                e.addSuppressed(settle);
            }
            throw e;
        }
    }

    // ---- releasing and asking ---------------------------------------------------------------

    /**
     * Releases every member and completes once a majority confirmed it; the other members finish
     * in the background (see the class comment). Fails, once every member answered, when fewer
     * than a majority released: with the first member's {@link RelockException} if a member
     * failed, else with {@link IllegalMonitorStateException} (the lock was lost, or never held by
     * this owner). Members that failed are retried in the background only after a success.
     */
    @Override
    public CompletionStage<Void> unlockAsync(long ownerId) {
        Unlock unlock = new Unlock(ownerId);
        for (LockEngine member : members) {
            CompletableFuture<Boolean> succeeded = unlock.result.handle((ignored, error) -> error == null);
            releaseInBackground(member, ownerId, Kind.UNLOCK, succeeded, error -> unlock.answered(member, error),
                    unlock::skipped);
        }
        return unlock.result.copy();
    }

    /** One unlock: the members' first answers, decided as soon as a majority released. */
    private final class Unlock {

        final CompletableFuture<Void> result = new CompletableFuture<>();
        private final long owner;
        private int released; // guarded by this
        private int answered; // guarded by this
        private final List<IllegalMonitorStateException> refusals = new ArrayList<>(); // guarded by this
        private RuntimeException failure; // guarded by this

        Unlock(long owner) {
            this.owner = owner;
        }

        /**
         * A member whose acquire was never sent: nothing to release there, and nothing confirmed
         * either, so it does not count towards the majority (the acquire won a majority of
         * members that did answer, and those are released).
         */
        void skipped() {
            answered(null, null, true);
        }

        /** A member's first release answered: released ({@code error} null), refused, or failed. */
        void answered(LockEngine member, Throwable error) {
            answered(member, error, false);
        }

        private void answered(LockEngine member, Throwable error, boolean skipped) {
            Throwable cause = error == null ? null : Exceptions.unwrap(error);
            boolean majority = false; // this answer made the majority
            boolean all;
            synchronized (this) {
                answered++;
                if (!skipped && cause == null) {
                    majority = ++released == quorum;
                } else if (cause instanceof IllegalMonitorStateException refusal) {
                    refusals.add(refusal);
                } else if (cause != null && failure == null) {
                    failure = Exceptions.translate("unlock " + member.getName(), cause);
                }
                all = answered == members.size() && released < quorum;
            }
            if (majority) {
                unwatch(owner);
                result.complete(null);
            } else if (all) {
                unwatch(owner);
                result.completeExceptionally(refused());
            }
        }

        private synchronized RuntimeException refused() {
            if (failure != null) {
                return Exceptions.translate("unlock " + getName(), failure);
            }
            IllegalMonitorStateException refused = new IllegalMonitorStateException("cannot unlock " + getName()
                    + " for owner " + owner + ": only " + released + " of " + members.size()
                    + " nodes still held it (" + quorum + " needed)"
                    + (refusals.isEmpty() ? "" : "; first refusal: " + refusals.get(0).getMessage()));
            refusals.forEach(refused::addSuppressed);
            return refused;
        }
    }

    // ---- lanes and background releases ------------------------------------------------------

    /** One member's lock on one client, and one owner: the RedLocks' operations there run in turn. */
    private record LaneKey(LockClient client, String key, long owner) {}

    /** What an operation in a lane does: an acquire, an unlock's release, or the rollback of an acquire. */
    private enum Kind { ACQUIRE, UNLOCK, ROLLBACK }

    /**
     * One operation in a lane: {@code start} sends it (its stage completes when the lane may move
     * on), {@code skip} answers it without sending it (see {@link #inLane}).
     */
    private record Operation(Kind kind, Supplier<CompletionStage<?>> start, Runnable skip) {}

    /** The operations waiting behind the one that runs; there is a lane while one runs. Guarded by LANES' compute. */
    private static final class Lane {
        final ArrayDeque<Operation> waiting = new ArrayDeque<>();
    }

    /**
     * Runs {@code operation} on {@code member} for {@code owner} once the operations started
     * there before (by any RedLock) have ended, background retries included. An unlock's release
     * that finds the acquire of the same hold still waiting in the lane (a slow member that fell
     * behind a quick lock-unlock) answers both without sending either: the acquire as "not
     * acquired", the release as skipped (not counted as confirmed), which is where Redis stands
     * without them. So a lane never holds more than one unsent acquire, however fast its owner
     * locks and unlocks. A rollback never cancels anything: the acquire it undoes has answered.
     */
    private static void inLane(LockEngine member, long owner, Operation operation) {
        LaneKey key = new LaneKey(member.client, member.key(), owner);
        Operation[] now = new Operation[3]; // [0] to run now; [1] and [2] to skip
        LANES.compute(key, (ignored, lane) -> {
            if (lane == null) {
                now[0] = operation;
                return new Lane();
            }
            Operation last = lane.waiting.peekLast();
            if (operation.kind() == Kind.UNLOCK && last != null && last.kind() == Kind.ACQUIRE) {
                lane.waiting.removeLast();
                now[1] = last;
                now[2] = operation;
            } else {
                lane.waiting.addLast(operation);
            }
            return lane;
        });
        if (now[0] != null) {
            run(key, now[0]);
        } else if (now[1] != null) {
            now[1].skip().run();
            now[2].skip().run();
        }
    }

    private static void run(LaneKey key, Operation operation) {
        start(operation.start()::get).whenComplete((ignored, error) -> {
            Operation[] next = new Operation[1];
            LANES.computeIfPresent(key, (k, lane) -> {
                next[0] = lane.waiting.pollFirst();
                return next[0] == null ? null : lane;
            });
            if (next[0] != null) {
                run(key, next[0]);
            }
        });
    }

    /** The stage {@code call} returns, or a failed one if it threw (the client closed, say). */
    private static <T> CompletableFuture<T> start(Supplier<? extends CompletionStage<T>> call) {
        try {
            return call.get().toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Releases {@code owner}'s hold of {@code member} in its lane. The first answer goes to
     * {@code firstAnswer} (null when released). A release that failed (not a refusal: that one
     * is final) is tried again, as a repeat, at most {@value #RELEASE_RETRIES} times with growing
     * pauses, if {@code retry} completes with true; after the last failure the member's hold is
     * forgotten, so that nobody renews it and it ends with its lease. The lane stays taken until
     * then, so that no later acquire of the owner there overtakes a release still to come.
     */
    private static void releaseInBackground(LockEngine member, long owner, Kind kind, CompletableFuture<Boolean> retry,
            Consumer<Throwable> firstAnswer, Runnable skipped) {
        inLane(member, owner, new Operation(kind, () -> {
            CompletableFuture<Void> lane = new CompletableFuture<>();
            start(() -> member.release(owner)).whenComplete((ignored, error) -> {
                firstAnswer.accept(error);
                if (error == null || Exceptions.unwrap(error) instanceof IllegalMonitorStateException) {
                    lane.complete(null);
                } else {
                    retry.whenComplete((retrying, ignoredError) -> {
                        if (Boolean.TRUE.equals(retrying)) {
                            retryRelease(member, owner, 0, Exceptions.unwrap(error), lane);
                        } else {
                            lane.complete(null);
                        }
                    });
                }
            });
            return lane;
        }, skipped));
    }

    private static void retryRelease(LockEngine member, long owner, int retries, Throwable last,
            CompletableFuture<Void> lane) {
        if (retries == RELEASE_RETRIES || closed(member)) {
            Hold hold = member.client.watchdog().get(member, owner);
            if (hold != null && hold.count <= 1) {
                member.client.watchdog().forget(hold);
            }
            LOG.warn("could not release RedLock member '{}' of owner {} after {} retries ({}); it ends with its lease",
                    member.getName(), owner, retries, last.toString());
            lane.complete(null);
            return;
        }
        try {
            member.client.timer().newTimeout(timeout -> start(() -> member.releaseAgain(owner))
                    .whenComplete((ignored, error) -> {
                        if (error == null || Exceptions.unwrap(error) instanceof IllegalMonitorStateException) {
                            lane.complete(null);
                        } else {
                            retryRelease(member, owner, retries + 1, Exceptions.unwrap(error), lane);
                        }
                    }), RELEASE_RETRY_PAUSE_MILLIS << retries, TimeUnit.MILLISECONDS);
        } catch (RuntimeException timerStopped) {
            // The client closed meanwhile: its holds are given up with it.
            lane.complete(null);
        }
    }

    private static boolean closed(LockEngine member) {
        try {
            member.checkOpen();
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    @Override
    public boolean forceUnlock() {
        boolean any = false;
        for (LockEngine member : members) {
            try {
                any |= member.forceUnlock();
            } catch (RelockException e) {
                // A node that is down holds nothing it could keep: its lease runs out there.
            }
        }
        return any;
    }

    /** Whether a majority of the nodes report the lock held. */
    @Override
    public boolean isLocked() {
        return countReachable(LockEngine::isLocked) >= quorum;
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return isHeldByThread(LockEngine.currentThreadId());
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        return countReachable(member -> member.isHeldByThread(threadId)) >= quorum;
    }

    /** The hold count that a majority of the nodes agree on at least. */
    @Override
    public int getHoldCount() {
        return (int) majorityValue(member -> member.getHoldCount());
    }

    /** The lease that a majority of the nodes still have, in ms; -2 if no majority holds it. */
    @Override
    public long remainTimeToLive() {
        long value = majorityValue(LockEngine::remainTimeToLive);
        return value < 0 ? -2 : value;
    }

    private int countReachable(java.util.function.Predicate<LockEngine> test) {
        int count = 0;
        for (LockEngine member : members) {
            try {
                if (test.test(member)) {
                    count++;
                }
            } catch (RelockException e) {
                // An unreachable node does not count towards the majority.
            }
        }
        return count;
    }

    private long majorityValue(java.util.function.ToLongFunction<LockEngine> read) {
        List<Long> values = new ArrayList<>();
        for (LockEngine member : members) {
            try {
                values.add(read.applyAsLong(member));
            } catch (RelockException e) {
                values.add(Long.MIN_VALUE);
            }
        }
        values.sort(Comparator.reverseOrder());
        long value = values.get(quorum - 1);
        return value == Long.MIN_VALUE ? -2 : value;
    }

    @Override
    public String toString() {
        return "RedLock{" + getName() + ", quorum=" + quorum + "}";
    }
}
