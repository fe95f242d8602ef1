package io.relock.internal.multi;

import io.relock.DistributedLock;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.RelockException;
import io.relock.internal.Client;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.multi.MemberLanes.Kind;
import io.relock.internal.multi.MemberLanes.Operation;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
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

/**
 * Redlock over N independent masters, one member lock (and client) per master. Members are
 * asked at the same time, not in turn, so one slow or dead node costs its timeout once, not
 * once per position. The lock is acquired when a majority (N/2+1) answered "acquired" and the
 * lease left after the time spent, minus a clock-drift allowance, is still positive. Otherwise
 * every member is released again, including members whose answer arrives late.
 *
 * <p><b>Majority, then background.</b> An unlock completes once a majority of members confirmed
 * the release ({@link MajorityRelease}); a failed acquire reports its failure without waiting for
 * the release of what it won. The other members' releases finish in the background, in the
 * members' lanes ({@link MemberLanes}), which also keep a late release from taking off a newer
 * hold of the same owner. The rounds of an acquire are {@link QuorumRound}s.
 */
public final class RedLock extends CompositeLock {

    private final int quorum;
    private final Client home;
    private final Map<Long, Watch> watches = new ConcurrentHashMap<>();

    public RedLock(Client home, DistributedLock... locks) {
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
        private volatile QuorumRound current;
        private volatile boolean abandoned;

        Acquire(long owner, long waitNanos, long leaseMillis) {
            this.owner = owner;
            this.waitNanos = waitNanos;
            this.leaseMillis = leaseMillis;
        }

        void nextRound() {
            QuorumRound round = new QuorumRound(getName(), members, quorum, owner, leaseMillis, RedLock.this::clock);
            current = round;
            // A node that does not answer costs at most this much per round. It gets the whole
            // command timeout, whatever the wait left: a node only slower than a short wait (a
            // loaded machine) is not down, and a round decided without it would report trouble.
            long nodeTimeout = members.get(0).client.commandTimeoutMillis();
            for (LockEngine member : members) {
                MemberLanes.inLane(member, owner, new Operation(Kind.ACQUIRE, () -> {
                    CompletableFuture<LockDriver.Attempt> attempt =
                            MemberLanes.start(() -> member.acquireAsync(owner, 0, leaseMillis));
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

        private void afterRound(QuorumRound round, Boolean won, Throwable error) {
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
            QuorumRound round = current;
            if (round != null) {
                round.abandon();
            }
        }
    }

    private io.netty.util.Timer timer() {
        return members.get(0).client.timer();
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
        MajorityRelease unlock = new MajorityRelease(getName(), members.size(), quorum, ownerId,
                () -> unwatch(ownerId));
        for (LockEngine member : members) {
            CompletableFuture<Boolean> succeeded = unlock.result.handle((ignored, error) -> error == null);
            MemberLanes.releaseInBackground(member, ownerId, Kind.UNLOCK, succeeded,
                    error -> unlock.answered(member, error), unlock::skipped);
        }
        return unlock.result.copy();
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
