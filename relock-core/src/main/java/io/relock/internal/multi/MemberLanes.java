package io.relock.internal.multi;

import io.relock.internal.engine.LockClient;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Exceptions;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lanes of RedLock members: the operations of RedLocks on one member lock, on one client,
 * for one owner, run one after another, whichever RedLock object started them. So a late release
 * cannot take off a newer hold of the same owner: an acquire on a slow member is sent only once
 * the release before it there (with its retries) has ended. And a slow member does not fall ever
 * further behind an owner that locks and unlocks quickly: an unlock whose acquire there was not
 * sent yet cancels it.
 *
 * <p>Releases here run in the background of the call that asked for them, retried a bounded
 * number of times ({@value #RELEASE_RETRIES}) when one fails; after that the member's hold is
 * forgotten and ends with its lease. Every member release is owner-checked (it names this
 * owner's field), so a late one never frees another owner's hold.
 */
final class MemberLanes {

    /** How many times a member's release that failed is tried again once the unlock is decided. */
    static final int RELEASE_RETRIES = 3;
    /** The pause before the first retry of a member's release; it doubles with each retry. */
    private static final long RELEASE_RETRY_PAUSE_MILLIS = 200;

    private static final Logger LOG = LoggerFactory.getLogger(RedLock.class);

    /**
     * The lanes with an operation under way. One map for the JVM: a lane is known by its client,
     * so the lanes of different clients never meet, and a RedLock object may be made anew for
     * every call, as {@code Relock.getRedLock} users do.
     */
    private static final Map<LaneKey, Lane> LANES = new ConcurrentHashMap<>();

    private MemberLanes() {}

    /** What an operation in a lane does: an acquire, an unlock's release, or the rollback of an acquire. */
    enum Kind { ACQUIRE, UNLOCK, ROLLBACK }

    /**
     * One operation in a lane: {@code start} sends it (its stage completes when the lane may move
     * on), {@code skip} answers it without sending it (see {@link #inLane}).
     */
    record Operation(Kind kind, Supplier<CompletionStage<?>> start, Runnable skip) {}

    /** One member's lock on one client, and one owner: the RedLocks' operations there run in turn. */
    private record LaneKey(LockClient client, String key, long owner) {}

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
    static void inLane(LockEngine member, long owner, Operation operation) {
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
    static <T> CompletableFuture<T> start(Supplier<? extends CompletionStage<T>> call) {
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
    static void releaseInBackground(LockEngine member, long owner, Kind kind, CompletableFuture<Boolean> retry,
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
}
