package io.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.RelockConfig;
import io.relock.RelockTimeoutException;
import io.relock.internal.ClientRuntime;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.AcquisitionState.State;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.lease.Hold;
import io.relock.internal.types.ReentrantDriver;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The acquisition's transitions, each driven to a chosen interleaving: the driver's replies are
 * held at a gate until the test lets them through, and the client's clock is a counter the test
 * moves. Redis is real (the scripts run), but no outcome depends on real time.
 */
class AcquisitionTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    private static final long LEASE = 30_000;

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private ClientRuntime runtime;
    private ClientRuntime other;
    private RedisServer server;

    @BeforeEach
    void connect(RedisServer server) {
        this.server = server;
        RelockConfig config = RelockConfig.builder().singleServer(server.uri()).build();
        runtime = ClientRuntime.start(config, clock::get);
        other = ClientRuntime.start(config);
    }

    @AfterEach
    void close() {
        runtime.close();
        other.close();
    }

    /** The reentrant driver, with every acquire and hold-count reply held until released. */
    static final class GatedDriver extends ReentrantDriver {

        final List<CompletableFuture<Void>> gates = new ArrayList<>();
        /** Each acquire's reply from Redis, before its gate: done once its script has run. */
        final List<CompletableFuture<Attempt>> replies = new ArrayList<>();
        final List<Throwable> injectedFailures = new ArrayList<>();
        /** Whether hold-count reads wait at a gate too (the test's own reads never do). */
        volatile boolean gateCounts;
        /**
         * Whether an acquire is answered before it returns, on the caller's thread, with no gate
         * (it waits for Redis's reply: never set while the caller may be a Redis I/O thread).
         */
        volatile boolean answerAtOnce;
        /** Whether acquire requests are held back (not sent to Redis) until {@link #sendHeldRequests()}. */
        volatile boolean holdRequests;
        private final List<Runnable> heldBack = new ArrayList<>();

        GatedDriver(ClientRuntime runtime, LockKeys keys) {
            super(runtime, keys, "reentrant");
        }

        private synchronized CompletableFuture<Void> nextGate() {
            CompletableFuture<Void> gate = new CompletableFuture<>();
            gates.add(gate);
            return gate;
        }

        synchronized CompletableFuture<Void> gate(int index) {
            return gates.get(index);
        }

        synchronized int gatesOpened() {
            return gates.size();
        }

        synchronized CompletableFuture<Attempt> reply(int acquire) {
            return replies.get(acquire);
        }

        /** Records an acquire's reply and its gate together, so a test that sees the gate finds the reply. */
        private synchronized CompletableFuture<Void> gateFor(CompletableFuture<Attempt> reply) {
            replies.add(reply);
            return nextGate();
        }

        /** The next acquire runs on Redis but its caller sees {@code failure} instead of the reply. */
        synchronized void failNextAcquireWith(Throwable failure) {
            injectedFailures.add(failure);
        }

        private synchronized Throwable takeFailure() {
            return injectedFailures.isEmpty() ? null : injectedFailures.remove(0);
        }

        synchronized int heldRequests() {
            return heldBack.size();
        }

        void sendHeldRequests() {
            List<Runnable> sending;
            synchronized (this) {
                sending = new ArrayList<>(heldBack);
                heldBack.clear();
            }
            sending.forEach(Runnable::run);
        }

        private CompletableFuture<Attempt> send(LockDriver.Request request) {
            if (!holdRequests) {
                return super.acquire(request);
            }
            CompletableFuture<Attempt> later = new CompletableFuture<>();
            synchronized (this) {
                heldBack.add(() -> super.acquire(request).whenComplete((attempt, error) -> {
                    if (error != null) {
                        later.completeExceptionally(error);
                    } else {
                        later.complete(attempt);
                    }
                }));
            }
            return later;
        }

        @Override
        public CompletableFuture<Attempt> acquire(LockDriver.Request request) {
            if (answerAtOnce) {
                return CompletableFuture.completedFuture(super.acquire(request).join());
            }
            Throwable failure = takeFailure();
            CompletableFuture<Attempt> reply = send(request);
            CompletableFuture<Void> gate = gateFor(reply);
            return reply.thenCombine(gate, (attempt, open) -> {
                if (failure != null) {
                    throw new java.util.concurrent.CompletionException(failure);
                }
                return attempt;
            });
        }

        @Override
        public CompletableFuture<Integer> holdCount(String field) {
            return gateCounts ? super.holdCount(field).thenCombine(nextGate(), (count, open) -> count)
                    : super.holdCount(field);
        }
    }

    private LockEngine engine(GatedDriver[] driver, WaitPolicy wait, String name) {
        LockKeys keys = runtime.keysOf(name, LockKeys.LOCK_CHANNEL_PREFIX);
        driver[0] = new GatedDriver(runtime, keys);
        return new LockEngine(runtime, keys, driver[0], wait);
    }

    private void awaitState(Acquisition acquisition, State state) {
        Eventually.await(PROMPTLY, acquisition + " to be " + state, () -> acquisition.state() == state);
    }

    private void awaitGates(GatedDriver driver, int count) {
        Eventually.await(PROMPTLY, count + " calls at the gate", () -> driver.gatesOpened() >= count);
    }

    /** Takes lock {@code name} on the other client; returns it there, to release. */
    private LockEngine holdElsewhere(String name) {
        LockKeys keys = other.keysOf(name, LockKeys.LOCK_CHANNEL_PREFIX);
        LockEngine holder = new LockEngine(other, keys, new ReentrantDriver(other, keys, "reentrant"),
                WaitPolicy.PUB_SUB);
        holder.lock();
        return holder;
    }

    /** Starts an acquire of a lock held elsewhere and lets its two attempts (before and after subscribing) through. */
    private Acquisition parked(LockEngine lock, GatedDriver driver, long owner) {
        int gates = driver.gatesOpened();
        Acquisition acquisition = lock.start(owner, TimeUnit.SECONDS.toNanos(60), LEASE);
        for (int gate = gates; gate < gates + 2; gate++) {
            awaitGates(driver, gate + 1);
            driver.gate(gate).complete(null);
        }
        awaitState(acquisition, State.PARKED);
        return acquisition;
    }

    /** An acquire that won gives its subscription back just after telling its caller (it then lingers). */
    private void awaitGivenBack() {
        Eventually.await(PROMPTLY, "the subscription given back", () -> runtime.channels().waitedOnChannels() == 0);
    }

    private static Attempt resultOf(Acquisition acquisition) throws Exception {
        return acquisition.result.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aFreeLockIsAcquiredInOneAttempt() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "free");
        Acquisition acquisition = lock.start(1, 0, LEASE);
        awaitGates(driver[0], 1);
        assertThat(acquisition.state()).isEqualTo(State.ATTEMPTING);
        driver[0].gate(0).complete(null);
        assertThat(resultOf(acquisition).acquired()).isTrue();
        assertThat(acquisition.state()).isEqualTo(State.DONE);
        assertThat(lock.isHeldByThread(1)).isTrue();
    }

    @Test
    void aReentryReadsItsHoldCountBeforeItsAttempt() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "again");
        Acquisition first = lock.start(1, 0, LEASE);
        awaitGates(driver[0], 1);
        driver[0].gate(0).complete(null);
        assertThat(resultOf(first).acquired()).isTrue();

        driver[0].gateCounts = true;
        Acquisition again = lock.start(1, 0, LEASE);
        awaitGates(driver[0], 2);
        assertThat(again.state()).isEqualTo(State.COUNTING);
        driver[0].gate(1).complete(null);
        awaitGates(driver[0], 3);
        assertThat(again.state()).isEqualTo(State.ATTEMPTING);
        driver[0].gate(2).complete(null);
        assertThat(resultOf(again).acquired()).isTrue();
        driver[0].gateCounts = false;
        assertThat(lock.isHeldByThread(1)).isTrue();
        assertThat(runtime.watchdog().get(lock, 1).count).isEqualTo(2);
    }

    @Test
    void aBusyReplyAfterTheDeadlineEndsTheWaitWithoutSubscribing() throws Exception {
        new LockEngine(other, other.keysOf("held", LockKeys.LOCK_CHANNEL_PREFIX),
                new ReentrantDriver(other, other.keysOf("held", LockKeys.LOCK_CHANNEL_PREFIX), "reentrant"),
                WaitPolicy.PUB_SUB).lock();
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "held");
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(5), LEASE);
        awaitGates(driver[0], 1);
        clock.addAndGet(TimeUnit.SECONDS.toNanos(6));
        driver[0].gate(0).complete(null);
        assertThat(resultOf(acquisition).acquired()).isFalse();
        assertThat(acquisition.state()).isEqualTo(State.DONE);
        assertThat(runtime.subscribedChannels()).isZero();
        assertThat(driver[0].gatesOpened()).as("no second attempt").isEqualTo(1);
    }

    @Test
    void aBusyLockWithTimeLeftIsWaitedForOnItsChannelAndTakenWhenReleased() throws Exception {
        LockEngine holder = holdElsewhere("released");
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "released");
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver[0], 1);
        driver[0].gate(0).complete(null);
        awaitGates(driver[0], 2);
        assertThat(runtime.subscribedChannels()).as("subscribed before the second attempt").isEqualTo(1);
        driver[0].gate(1).complete(null);
        awaitState(acquisition, State.PARKED);
        holder.forceUnlock(); // deletes and publishes 0, handing over to nobody
        awaitGates(driver[0], 3);
        driver[0].gate(2).complete(null);
        assertThat(resultOf(acquisition).acquired()).isTrue();
        awaitGivenBack();
    }

    @Test
    void aCancelWakesTheWaiterParkedLastWhenAParkWokeAtOnceAndItsNextAttemptParkedFirst() throws Exception {
        holdElsewhere("rewoken");
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "rewoken");
        Acquisition acquisition = parked(lock, driver[0], 1);
        Turn turn = acquisition.turn();
        long heard = turn.messages();
        String channel = lock.keys().channel();
        server.command("PUBLISH", channel, UnlockChannels.UNLOCK_MESSAGE); // wakes it: its third attempt
        awaitGates(driver[0], 3);
        // A second release announced while that attempt is out: kept, so its park wakes it at once.
        server.command("PUBLISH", channel, UnlockChannels.UNLOCK_MESSAGE);
        Eventually.await(PROMPTLY, "both releases heard", () -> turn.messages() == heard + 2);
        Eventually.await(PROMPTLY, "the third attempt answered", () -> driver[0].reply(2).isDone());
        // Let through on this thread: the park wakes at once, and the fourth attempt is answered
        // and parks again inside that park, before it returns.
        driver[0].answerAtOnce = true;
        driver[0].gate(2).complete(null);
        assertThat(acquisition.state()).isEqualTo(State.PARKED);

        acquisition.cancel();

        assertThat(resultOf(acquisition).acquired()).isFalse();
        assertThat(acquisition.state()).isEqualTo(State.DONE);
    }

    /** Starts an acquire of {@code name}, held elsewhere, and parks it queued with the ticket of its second attempt. */
    private Acquisition queued(LockEngine lock, GatedDriver driver) {
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver, 1);
        driver.gate(0).complete(null);
        awaitGates(driver, 2);
        driver.gate(1).complete(null); // the subscribed attempt: busy, queued with its ticket
        awaitState(acquisition, State.PARKED);
        return acquisition;
    }

    /**
     * Lock {@code name}, held elsewhere, handed to owner 1 of this client at the end of the window
     * for claims not waited for: 1 holds, with its claim (the third acquire) at its gate.
     */
    private LockEngine handedWithClaimAtGate(GatedDriver[] driver, String name) throws Exception {
        LockEngine holder = holdElsewhere(name);
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, name);
        Acquisition acquisition = queued(lock, driver[0]);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(Acquisition.FAST_CLAIM_WINDOW_MILLIS));
        holder.unlock();
        assertThat(resultOf(acquisition).acquired()).as("held with the claim still at its gate").isTrue();
        awaitGates(driver[0], 3);
        return lock;
    }

    @Test
    void aWaiterHandedTheLockSoonAfterItQueuedReturnsBeforeItsClaimIsAnswered() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = handedWithClaimAtGate(driver, "handed");
        Eventually.await(PROMPTLY, "the claim ran on Redis", () -> driver[0].reply(2).isDone());
        assertThat(runtime.lockInfo("handed").remainTimeToLive()).as("the claim set the caller's lease").isGreaterThan(5000);
        Hold hold = runtime.watchdog().get(lock, 1);
        assertThat(hold.writePending()).isTrue();

        CompletableFuture<Void> unlock = lock.unlockAsync(1).toCompletableFuture();
        assertThat(lock.isHeldByThread(1)).as("the unlock waits for the claim's reply").isTrue();
        assertThat(unlock).isNotDone();
        driver[0].gate(2).complete(null);
        unlock.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
        assertThat(driver[0].gatesOpened()).as("one claim after the hand-off").isEqualTo(3);
        awaitGivenBack();
    }

    /**
     * A re-entry while the claim is unanswered reads its count only once the claim is: a retry of
     * the claim after a lost reply judges whether it already ran by the count, which must still be
     * the claim's own.
     */
    @Test
    void aReentryWhileTheClaimIsUnansweredFollowsTheClaim() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = handedWithClaimAtGate(driver, "handed-reentered");

        driver[0].gateCounts = true;
        Acquisition again = lock.start(1, 0, LEASE);
        assertThat(again.state()).as("nothing sent before the claim is answered").isEqualTo(State.STARTED);
        assertThat(driver[0].gatesOpened()).isEqualTo(3);
        driver[0].gate(2).complete(null);
        awaitGates(driver[0], 4);
        assertThat(again.state()).isEqualTo(State.COUNTING);
        driver[0].gate(3).complete(null);
        awaitGates(driver[0], 5);
        driver[0].gate(4).complete(null);
        assertThat(resultOf(again).acquired()).isTrue();
        driver[0].gateCounts = false;
        assertThat(runtime.lockInfo("handed-reentered").holders()).containsExactly(
                java.util.Map.entry(runtime.clientId() + ":1", 2L));
        assertThat(runtime.watchdog().get(lock, 1).count).isEqualTo(2);
    }

    @Test
    void aWaiterHandedTheLockLongAfterItQueuedReturnsOnlyOnceItsClaimTookTheHold() throws Exception {
        LockEngine holder = holdElsewhere("handed-late");
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "handed-late");
        Acquisition acquisition = queued(lock, driver[0]);
        // Paused, as far as this client can tell: the hand-over lease may be nearly over.
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(Acquisition.FAST_CLAIM_WINDOW_MILLIS + 1));
        holder.unlock();
        Eventually.await(PROMPTLY, "the hand-over", () -> lock.isHeldByThread(1));
        awaitGates(driver[0], 3);
        assertThat(acquisition.result).as("not before the claim's reply").isNotDone();
        driver[0].gate(2).complete(null);
        assertThat(resultOf(acquisition).acquired()).isTrue();
        assertThat(driver[0].gatesOpened()).as("one claim after the hand-off").isEqualTo(3);
        assertThat(runtime.watchdog().get(lock, 1).writePending()).isFalse();
        awaitGivenBack();
        lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aClaimThatFindsTheHandOffLapsedMakesTheHoldLost() throws Exception {
        LockEngine holder = holdElsewhere("lapsed");
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "lapsed");
        Acquisition acquisition = queued(lock, driver[0]);
        List<io.relock.LockLostEvent> lost = new java.util.concurrent.CopyOnWriteArrayList<>();
        runtime.addListener(lost::add);
        driver[0].holdRequests = true;
        holder.unlock();
        assertThat(resultOf(acquisition).acquired()).isTrue();
        // The hand-over lease runs out (and another client takes the lock) before the claim arrives.
        Eventually.await(PROMPTLY, "the claim was held back", () -> driver[0].heldRequests() == 1);
        lock.forceUnlock();
        holdElsewhere("lapsed");
        driver[0].holdRequests = false;
        driver[0].sendHeldRequests();
        awaitGates(driver[0], 3);
        driver[0].gate(2).complete(null);
        Eventually.await(PROMPTLY, "the loss was told", () -> lost.size() == 1);
        assertThat(lost.get(0).lockName()).isEqualTo("lapsed");
        assertThat(lost.get(0).cause()).hasMessageContaining("had lapsed");
        assertThatThrownBy(() -> lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void aGrantThatComesWhileAnAttemptIsInFlightIsClaimedWhenItsReplyIsIn() throws Exception {
        LockEngine holder = holdElsewhere("in-flight");
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "in-flight");
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver[0], 1);
        driver[0].gate(0).complete(null);
        awaitGates(driver[0], 2);
        driver[0].reply(1).get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS); // ran on Redis: queued
        holder.unlock(); // hands over while the attempt's reply waits at its gate
        Eventually.await(PROMPTLY, "the hand-over", () -> lock.isHeldByThread(1));
        assertThat(acquisition.result).as("not taken with an attempt in flight").isNotDone();
        driver[0].gate(1).complete(null); // "busy": it ran before the hand-off
        awaitGates(driver[0], 3);
        driver[0].gate(2).complete(null);
        assertThat(resultOf(acquisition).acquired()).isTrue();
        assertThat(driver[0].gatesOpened()).as("one claim after the hand-off").isEqualTo(3);
        lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aBackoffWaiterPausesOnATimerAndNeverSubscribes() throws Exception {
        LockKeys keys = other.keysOf("spun", LockKeys.LOCK_CHANNEL_PREFIX);
        LockEngine holder = new LockEngine(other, keys, new ReentrantDriver(other, keys, "reentrant"),
                WaitPolicy.PUB_SUB);
        holder.lock();
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.backoff(Duration.ofMillis(5), Duration.ofMillis(20)), "spun");
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver[0], 1);
        driver[0].gate(0).complete(null);
        awaitGates(driver[0], 2);
        assertThat(runtime.subscribedChannels()).isZero();
        // The second attempt runs on Redis before the unlock (only its reply waits at the gate):
        // busy, so the waiter pauses on its timer and tries a third time, without a subscription.
        assertThat(driver[0].reply(1).get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS).acquired()).as("busy")
                .isFalse();
        holder.unlock();
        driver[0].gate(1).complete(null);
        awaitGates(driver[0], 3);
        assertThat(acquisition.state()).isEqualTo(State.ATTEMPTING);
        assertThat(runtime.subscribedChannels()).isZero();
        driver[0].gate(2).complete(null);
        assertThat(resultOf(acquisition).acquired()).isTrue();
    }

    @Test
    void aCancelWhileAnAttemptIsInFlightUndoesTheHoldItWon() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "cancelled");
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver[0], 1);
        Eventually.await(PROMPTLY, "the attempt took the lock on Redis", lock::isLocked);
        acquisition.cancel();
        driver[0].gate(0).complete(null);
        assertThat(resultOf(acquisition).acquired()).isFalse();
        assertThat(lock.isLocked()).as("undone on Redis").isFalse();
        assertThat(runtime.watchdog().get(lock, 1)).as("nothing tracked").isNull();
    }

    @Test
    void anAcquireWhoseOutcomeIsUnknownIsUndoneBeforeTheCallerHearsOfIt() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "unknown");
        driver[0].failNextAcquireWith(new RelockTimeoutException("reply lost", null));
        Acquisition acquisition = lock.start(1, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitGates(driver[0], 1);
        Eventually.await(PROMPTLY, "the attempt took the lock on Redis", lock::isLocked);
        driver[0].gate(0).complete(null);
        assertThatThrownBy(() -> resultOf(acquisition)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RelockTimeoutException.class);
        assertThat(acquisition.state()).isEqualTo(State.DONE);
        assertThat(lock.isLocked()).as("undone before the failure was reported").isFalse();
    }

    @Test
    void anAbortWhileParkedEndsTheWaitAtOnceAndGivesTheChannelBack() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "aborted");
        holdElsewhere("aborted");
        Acquisition acquisition = parked(lock, driver[0], 1);
        IllegalStateException closing = new IllegalStateException("closing");
        acquisition.abort(closing);
        assertThatThrownBy(() -> resultOf(acquisition)).hasCause(closing);
        assertThat(acquisition.state()).isEqualTo(State.DONE);
        assertThat(runtime.subscribedChannels()).isZero();
    }

    /** Starts an acquire that parks behind another owner of this client, asking Redis nothing. */
    private Acquisition parkedBehind(LockEngine lock, GatedDriver driver, long owner) {
        int gates = driver.gatesOpened();
        Acquisition acquisition = lock.start(owner, TimeUnit.SECONDS.toNanos(60), LEASE);
        awaitState(acquisition, State.PARKED);
        assertThat(driver.gatesOpened()).as("no attempt").isEqualTo(gates);
        return acquisition;
    }

    /** Owner 1 takes the free lock with {@code lease}; owner 2's acquire then parks behind it. */
    private Acquisition heldThenParkedBehind(LockEngine lock, GatedDriver driver, long lease) throws Exception {
        Acquisition first = lock.start(1, 0, lease);
        awaitGates(driver, 1);
        driver.gate(0).complete(null);
        assertThat(resultOf(first).acquired()).isTrue();
        return parkedBehind(lock, driver, 2);
    }

    @Test
    void anInterruptedWaiterHandsItsWakeUpOnToAnotherWaiterOfItsClient() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "passed");
        holdElsewhere("passed");
        Acquisition first = parked(lock, driver[0], 1);
        Acquisition second = parkedBehind(lock, driver[0], 2);

        // The first may have been woken by a release meant for either of them when the interrupt
        // came; it cannot tell, so the second tries again rather than sleep for the holder's TTL.
        // The first also held this client's place in the hand-off queue; giving it up (once
        // the first has ended) wakes the second a second time: two attempts, both told "busy".
        first.cancel();
        assertThat(resultOf(first).acquired()).isFalse();
        for (int gate = 2; gate < 4; gate++) {
            awaitGates(driver[0], gate + 1);
            driver[0].gate(gate).complete(null);
            assertThat(driver[0].reply(gate).get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS).acquired())
                    .as("still held").isFalse();
        }
        awaitState(second, State.PARKED);
        assertThat(driver[0].gatesOpened()).as("no third attempt").isEqualTo(4);
        second.cancel();
        assertThat(resultOf(second).acquired()).isFalse();
    }

    @Test
    void aWaiterBehindAnotherOwnerOfItsClientIsHandedTheHoldAtItsReleaseWithoutAskingRedis() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "local");
        Acquisition second = heldThenParkedBehind(lock, driver[0], LEASE);

        lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(resultOf(second).acquired()).isTrue();
        assertThat(driver[0].gatesOpened()).as("no attempt").isEqualTo(1);
        assertThat(runtime.lockInfo(lock.getName()).holders()).containsOnlyKeys(runtime.clientId() + ":2");
        assertThat(runtime.watchdog().get(lock, 1)).as("the releaser's hold is forgotten").isNull();
        awaitGivenBack();
        lock.unlockAsync(2).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void anAsyncWaiterHandedTheHoldByAnotherOwnerContinuesOffTheReleasingThread() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "async-local");
        Acquisition second = heldThenParkedBehind(lock, driver[0], LEASE);
        CompletableFuture<Thread> continuedOn = second.result.thenApply(attempt -> Thread.currentThread());

        lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(continuedOn.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isNotSameAs(Thread.currentThread());
        assertThat(runtime.lockInfo(lock.getName()).holders()).containsOnlyKeys(runtime.clientId() + ":2");
        lock.unlockAsync(2).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aHoldWithTooLittleLeaseLeftGoesThroughRedisAndTheWaiterBehindItAsksRedis() throws Exception {
        GatedDriver[] driver = new GatedDriver[1];
        LockEngine lock = engine(driver, WaitPolicy.PUB_SUB, "short");
        Acquisition second = heldThenParkedBehind(lock, driver[0], 1500);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1500 - Turn.HAND_OVER_LEASE_MARGIN_MILLIS + 1));

        lock.unlockAsync(1).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        awaitGates(driver[0], 2);
        assertThat(second.result).as("not handed over").isNotDone();
        driver[0].gate(1).complete(null);
        assertThat(resultOf(second).acquired()).isTrue();
        assertThat(runtime.lockInfo(lock.getName()).holders()).containsOnlyKeys(runtime.clientId() + ":2");
        lock.unlockAsync(2).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }
}
