package io.relock.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.relock.HeldLock;
import io.relock.LockObserver;
import io.relock.RelockConnectionException;
import io.relock.RelockException;
import io.relock.WatchdogTickEvent;
import io.relock.internal.backend.Renewal;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.engine.ManualTimer;
import io.relock.internal.redis.Script;
import io.relock.internal.support.Args;
import io.relock.internal.support.Observers;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The watchdog's rules without Redis and without real time: renewal calls are answered by the
 * test ({@link FakeRenewals}), the timer fires when the test says ({@link ManualTimer}), and the
 * clock is a counter the test moves. Each test drives one rule through a chosen sequence of
 * ticks and replies.
 */
public class WatchdogTest {

    /** Watchdog timeout 3 s: a tick every second; a hold renewed at t is lost if not renewed by t + 2 s. */
    private static final long LEASE = 3_000;
    private static final long INTERVAL = LEASE / 3;

    private final AtomicLong clock = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
    private final ManualTimer timer = new ManualTimer();
    private final FakeRenewals redis = new FakeRenewals();
    private final List<Loss> losses = new CopyOnWriteArrayList<>();
    private final List<WatchdogTickEvent> ticks = new CopyOnWriteArrayList<>();
    private final AtomicInteger everyTickRuns = new AtomicInteger();
    /** What the watchdog runs at every tick before renewing; a test may swap it. */
    private final AtomicReference<Runnable> everyTick = new AtomicReference<>(everyTickRuns::incrementAndGet);
    private Watchdog watchdog;

    private record Loss(Hold hold, Throwable cause) {}

    /** A lock as a hold sees it; the key is the name, so tests can route keys to slots by name. */
    record StubLock(String name, Renewal renewal) implements WatchedLock {

        StubLock(String name) {
            this(name, Script.LOCK_RENEW);
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public String key() {
            return name;
        }

        @Override
        public String fieldOf(long owner) {
            return "client:" + owner;
        }

        @Override
        public String type() {
            return "stub";
        }
    }

    /**
     * Renewal calls held until the test answers them, and a write confirmation the test sets.
     * Stands in for Redis only in what the watchdog sees of it: replies, not script semantics.
     */
    public static final class FakeRenewals implements RenewalGateway {

        /** One renew script call: its keys and fields, and the reply the test completes. */
        record Call(Renewal script, List<String> keys, List<String> args, CompletableFuture<List<Object>> reply) {

            /** Answers each key in order: 1 renewed, 0 gone. */
            void answer(long... perKey) {
                List<Object> values = new ArrayList<>();
                for (long value : perKey) {
                    values.add(value);
                }
                reply.complete(values);
            }

            void answerAll(long value) {
                answer(keys.stream().mapToLong(key -> value).toArray());
            }

            void fail(Throwable error) {
                reply.completeExceptionally(error);
            }
        }

        final List<Call> calls = new CopyOnWriteArrayList<>();
        final Map<String, Integer> slots = new ConcurrentHashMap<>();
        final AtomicLong epoch = new AtomicLong();
        volatile WriteConfirmation confirmation = WriteConfirmation.CONFIRMED;

        @Override
        public int slotOf(String key) {
            return slots.getOrDefault(key, 0);
        }

        @Override
        public long connectionEpoch() {
            return epoch.get();
        }

        @Override
        public CompletableFuture<List<Object>> renew(Renewal script, String[] keys, String[] args) {
            Call call = new Call(script, List.of(keys), List.of(args), new CompletableFuture<>());
            calls.add(call);
            return call.reply();
        }

        @Override
        public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
            return CompletableFuture.completedFuture(confirmation);
        }

        @Override
        public int replicaSyncMinReplicas() {
            return 1;
        }

        @Override
        public long replicaSyncTimeoutMillis() {
            return 100;
        }

        Call last() {
            return calls.get(calls.size() - 1);
        }
    }

    @BeforeEach
    void startWatchdog() {
        Observers observers = new Observers(List.of(new LockObserver() {
            @Override
            public void onWatchdogTick(WatchdogTickEvent event) {
                ticks.add(event);
            }
        }));
        watchdog = new Watchdog(redis, timer, clock::get, LEASE, (hold, cause) -> losses.add(new Loss(hold, cause)),
                observers, () -> everyTick.get().run());
        watchdog.start();
    }

    private Hold acquireRenewed(String name, long owner) {
        return watchdog.acquired(new StubLock(name), owner, "client:" + owner, Args.WATCHDOG_LEASE, 1, "thread-" + owner);
    }

    private Hold acquireWithLease(String name, long owner, long leaseMillis) {
        return watchdog.acquired(new StubLock(name), owner, "client:" + owner, leaseMillis, 1, "thread-" + owner);
    }

    private void advance(long millis) {
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** Moves the clock to the next tick's planned time and runs the tick. */
    private void tick() throws Exception {
        advance(INTERVAL);
        timer.elapse();
    }

    private long leaseLeft(String name) {
        return watchdog.held().stream().filter(held -> held.name().equals(name)).findFirst()
                .map(HeldLock::leaseLeftMillis).orElse(-1L);
    }

    // ---- a renewal that finds the lock gone ---------------------------------------------------

    @Test
    void aRenewalAnsweredZeroMarksTheHoldLostAndTellsTheListenerOnceWithoutACause() throws Exception {
        Hold hold = acquireRenewed("gone", 1);
        tick();
        assertThat(redis.calls).hasSize(1);
        redis.last().answer(0);

        assertThat(hold.lost).isTrue();
        assertThat(hold.lossCause).isNull();
        assertThat(losses).containsExactly(new Loss(hold, null));
        tick();
        tick();
        assertThat(redis.calls).as("a lost hold is not renewed again").hasSize(1);
        assertThat(losses).as("told once").hasSize(1);
        assertThat(watchdog.held()).isEmpty();
    }

    @Test
    void aRenewalAnsweredZeroWhileAReleaseOfTheHoldIsInFlightIsNoLoss() throws Exception {
        Hold hold = acquireRenewed("releasing", 1);
        tick();
        // The owner's unlock went out after the renewal was sent and removed the key first.
        hold.releasing.incrementAndGet();
        redis.last().answer(0);

        assertThat(hold.lost).isFalse();
        assertThat(losses).isEmpty();
    }

    @Test
    void aRenewalAnsweredZeroForAHoldForgottenAndTakenAgainMeanwhileIsNoLoss() throws Exception {
        Hold first = acquireRenewed("replaced", 1);
        tick();
        // Released and acquired again while the renewal was in flight: the reply is about the old hold.
        watchdog.forget(first);
        Hold second = acquireRenewed("replaced", 1);
        assertThat(second).isNotSameAs(first);
        redis.last().answer(0);

        assertThat(first.lost).isFalse();
        assertThat(second.lost).isFalse();
        assertThat(losses).isEmpty();
        assertThat(watchdog.held()).extracting(HeldLock::name).containsExactly("replaced");
    }

    // ---- renewal errors and unconfirmed renewals ----------------------------------------------

    @Test
    void aRenewalErrorIsRetriedAtTheNextTickAndLosesTheHoldOnlyWhenTheLeaseWouldRunOutBeforeTheNext()
            throws Exception {
        Hold hold = acquireRenewed("flaky", 1);
        RelockConnectionException first = new RelockConnectionException("connection reset", null);
        tick(); // 1 s after the acquire: 2 s of lease left, the next tick can still try
        redis.last().fail(first);
        assertThat(hold.lost).isFalse();
        assertThat(losses).isEmpty();

        RelockConnectionException second = new RelockConnectionException("connection refused", null);
        tick(); // 2 s after: the lease would run out before the tick after this one
        assertThat(redis.calls).as("retried at the next tick").hasSize(2);
        assertThat(redis.last().keys()).containsExactly("flaky");
        redis.last().fail(second);

        assertThat(hold.lost).isTrue();
        assertThat(losses).containsExactly(new Loss(hold, second));
        assertThat(hold.lossCause).isSameAs(second);
    }

    @Test
    void aRenewalErrorFollowedByASuccessKeepsTheHoldAndStartsItsLeaseAgain() throws Exception {
        Hold hold = acquireRenewed("recovers", 1);
        tick();
        redis.last().fail(new RelockConnectionException("connection reset", null));
        tick();
        advance(300); // the reply takes its time: the lease started when Redis was asked, not when it answered
        redis.last().answer(1);
        assertThat(leaseLeft("recovers")).as("renewed as of the second call").isEqualTo(LEASE - 300);

        tick();
        redis.last().fail(new RelockConnectionException("connection reset", null));
        assertThat(hold.lost).as("one failure 1 s after a renewal leaves time to retry").isFalse();
        assertThat(losses).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"TOO_FEW", "UNSURE"})
    void anUnconfirmedRenewalCountsAsFailedNotRenewedAndEndsInLossByTheSameRule(String outcome) throws Exception {
        redis.confirmation = outcome.equals("TOO_FEW") ? WriteConfirmation.tooFew(0) : WriteConfirmation.UNSURE;
        Hold hold = acquireRenewed("unconfirmed", 1);
        tick();
        redis.last().answer(1);
        assertThat(hold.lost).isFalse();
        assertThat(leaseLeft("unconfirmed")).as("the lease did not start again").isEqualTo(LEASE - INTERVAL);
        assertThat(ticks).containsExactly(new WatchdogTickEvent(0, 1, 0, 0));

        tick();
        redis.last().answer(1);
        assertThat(hold.lost).isTrue();
        assertThat(losses).hasSize(1);
        assertThat(losses.get(0).cause()).isInstanceOf(RelockException.class)
                .hasMessageContaining(outcome.equals("TOO_FEW") ? "only 0 of 1 replicas" : "re-established");
    }

    @Test
    void aRenewalThatHangsLosesTheHoldHalfATickBeforeTheLeaseEndsAndTellsTheListenerOnce() throws Exception {
        Hold hold = acquireRenewed("swallowed", 1);
        tick(); // 1 s: the renewal goes out and is never answered, as on a connection that swallows everything
        tick(); // 2 s: skipped (the renewal is still out); the lease ends before the tick after next
        assertThat(redis.calls).hasSize(1);
        assertThat(hold.lost).isFalse();

        advance(INTERVAL / 2); // 2.5 s: half a tick before the lease's end at 3 s
        timer.elapse();
        assertThat(hold.lost).isTrue();
        assertThat(losses).hasSize(1);
        assertThat(losses.get(0).cause()).isInstanceOf(RelockException.class)
                .hasMessageContaining("lock 'swallowed' was not renewed in time")
                .hasMessageContaining("of its 3000 ms lease");

        redis.last().fail(new RelockConnectionException("command timed out", null));
        assertThat(losses).as("the renewal's late failure tells nobody again").hasSize(1);
    }

    @Test
    void aSlowRenewalAnsweredBeforeTheDeadlineKeepsTheHold() throws Exception {
        Hold hold = acquireRenewed("slow-reply", 1);
        tick();
        tick();
        advance(INTERVAL / 4); // 2.25 s: the reply to the renewal sent at 1 s comes in
        redis.last().answer(1);
        advance(INTERVAL / 4); // 2.5 s: the deadline check finds the hold renewed as of 1 s
        timer.elapse();

        assertThat(hold.lost).isFalse();
        assertThat(losses).isEmpty();
        assertThat(leaseLeft("slow-reply")).isEqualTo(LEASE - (INTERVAL + INTERVAL / 2));
    }

    // ---- one tick at a time, and batches ------------------------------------------------------

    @Test
    void aTickThatFindsTheLastTicksRenewalsStillRunningSkips() throws Exception {
        acquireRenewed("slow", 1);
        tick();
        tick();
        assertThat(redis.calls).as("the second tick skipped").hasSize(1);
        assertThat(ticks).as("a skipped tick reports nothing").isEmpty();
        assertThat(everyTickRuns).as("but still ran its tick action").hasValue(2);

        redis.last().answer(1);
        tick();
        assertThat(redis.calls).as("the tick after the reply renews again").hasSize(2);
    }

    @Test
    void renewalsAreBatchedByScriptAndSlotAndAtMostBatchSizeKeysPerCall() throws Exception {
        int many = Watchdog.BATCH_SIZE + 1;
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < many; i++) {
            acquireRenewed("lock-" + i, i);
            expected.add("lock-" + i + "/client:" + i);
        }
        redis.slots.put("elsewhere", 7);
        acquireRenewed("elsewhere", 1);
        expected.add("elsewhere/client:1");
        watchdog.acquired(new StubLock("read", Script.RW_READ_RENEW), 1, "client:1", Args.WATCHDOG_LEASE, 1, null);
        expected.add("read/client:1");

        tick();

        assertThat(redis.calls).extracting(call -> call.script() + "@" + redis.slotOf(call.keys().get(0)) + "×"
                + call.keys().size())
                .containsExactlyInAnyOrder("LOCK_RENEW@0×" + Watchdog.BATCH_SIZE, "LOCK_RENEW@0×1", "LOCK_RENEW@7×1",
                        "RW_READ_RENEW@0×1");
        Set<String> renewed = new HashSet<>();
        for (FakeRenewals.Call call : redis.calls) {
            assertThat(call.keys()).extracting(redis::slotOf).as("one slot per call").containsOnly(
                    redis.slotOf(call.keys().get(0)));
            assertThat(call.args()).hasSize(call.keys().size() + 1).first().isEqualTo(Long.toString(LEASE));
            for (int i = 0; i < call.keys().size(); i++) {
                assertThat(renewed.add(call.keys().get(i) + "/" + call.args().get(i + 1))).as("renewed once").isTrue();
            }
        }
        assertThat(renewed).isEqualTo(expected);
    }

    // ---- what the registry keeps --------------------------------------------------------------

    @Test
    void aFixedLeaseHoldThatRanOutUnreleasedIsForgottenOneWatchdogTimeoutLater() throws Exception {
        acquireWithLease("fixed", 1, 1_000);
        tick(); // 1 s: the lease ran out, nobody unlocked
        assertThat(watchdog.held()).as("not held any more").isEmpty();
        assertThat(watchdog.size()).as("but kept so that a late unlock can say why").isEqualTo(1);
        tick();
        tick();
        tick(); // 4 s: exactly lease + watchdog timeout
        assertThat(watchdog.size()).isEqualTo(1);
        tick(); // 5 s: past it
        assertThat(watchdog.size()).isZero();
        assertThat(redis.calls).as("a fixed lease is never renewed").isEmpty();
        assertThat(losses).as("running out is no loss").isEmpty();
    }

    @Test
    void aLostHoldIsKeptUntilItsOwnerUnlocks() throws Exception {
        Hold hold = acquireRenewed("lost", 1);
        tick();
        redis.last().answer(0);
        for (int i = 0; i < 10; i++) {
            tick();
        }
        assertThat(watchdog.size()).as("10 s later, far past lease + watchdog timeout").isEqualTo(1);
        watchdog.forget(hold);
        assertThat(watchdog.size()).isZero();
    }

    @Test
    void aReentryWithAFixedLeaseKeepsTheWatchdogOfTheFirstAcquire() throws Exception {
        Hold first = acquireRenewed("again", 1);
        Hold again = watchdog.acquired(new StubLock("again"), 1, "client:1", 500, 2, "thread-1");

        assertThat(again).isSameAs(first);
        assertThat(again.watchdog).isTrue();
        assertThat(again.count).isEqualTo(2);
        tick();
        assertThat(redis.calls).hasSize(1);
        assertThat(redis.last().keys()).containsExactly("again");
    }

    @Test
    void anAcquireAfterALossOrAForgetStartsAFreshHold() throws Exception {
        Hold lost = acquireRenewed("fresh", 1);
        tick();
        redis.last().answer(0);
        Hold afterLoss = acquireRenewed("fresh", 1);
        assertThat(afterLoss).isNotSameAs(lost);
        assertThat(afterLoss.lost).isFalse();

        watchdog.forget(afterLoss);
        Hold afterForget = acquireRenewed("fresh", 1);
        assertThat(afterForget).isNotSameAs(afterLoss);
        assertThat(watchdog.size()).isEqualTo(1);
    }

    @Test
    void heldListsOnlyLiveHoldsOldestFirstWithTheLeaseLeftByTheClock() throws Exception {
        acquireRenewed("lost", 9);
        tick();
        redis.last().answer(0);
        // Names in the opposite order of acquisition, so an order by name would show.
        acquireRenewed("b-first", 1);
        advance(100);
        acquireRenewed("a-second", 2);
        advance(100);
        acquireWithLease("fixed-third", 3, 500);
        advance(200);

        assertThat(watchdog.held())
                .extracting(HeldLock::name, HeldLock::ownerId, HeldLock::leaseLeftMillis, HeldLock::watchdog,
                        HeldLock::type, HeldLock::holdCount)
                .containsExactly(tuple("b-first", 1L, LEASE - 400, true, "stub", 1),
                        tuple("a-second", 2L, LEASE - 300, true, "stub", 1),
                        tuple("fixed-third", 3L, 300L, false, "stub", 1));
        advance(300);
        assertThat(watchdog.held()).extracting(HeldLock::name).as("the fixed lease ran out")
                .containsExactly("b-first", "a-second");
    }

    // ---- the tick itself ----------------------------------------------------------------------

    @Test
    void aTickReportsRenewedFailedLostAndItsLagOnceAllItsCallsAreBack() throws Exception {
        acquireRenewed("renewed", 1);
        acquireRenewed("gone", 2);
        redis.slots.put("failing", 3);
        acquireRenewed("failing", 3);
        long lateMillis = 250;
        advance(lateMillis);
        tick();

        Map<Integer, FakeRenewals.Call> bySlot = redis.calls.stream()
                .collect(Collectors.toMap(call -> redis.slotOf(call.keys().get(0)), call -> call));
        FakeRenewals.Call slotZero = bySlot.get(0);
        slotZero.answer(slotZero.keys().stream().mapToLong(key -> key.equals("renewed") ? 1 : 0).toArray());
        assertThat(ticks).as("not before the last call is back").isEmpty();
        bySlot.get(3).fail(new RelockConnectionException("connection reset", null));

        assertThat(ticks).containsExactly(new WatchdogTickEvent(1, 1, 1, TimeUnit.MILLISECONDS.toNanos(lateMillis)));
    }

    @Test
    void aThrowingTickActionDoesNotStopTheTicking() throws Exception {
        acquireRenewed("kept", 1);
        everyTick.set(() -> {
            everyTickRuns.incrementAndGet();
            throw new IllegalStateException("registry refresh failed");
        });
        tick();
        assertThat(everyTickRuns).hasValue(1);
        assertThat(timer.pendingCount()).as("the next tick is planned").isEqualTo(1);

        everyTick.set(everyTickRuns::incrementAndGet);
        tick();
        assertThat(everyTickRuns).hasValue(2);
        assertThat(redis.calls).as("and renews").hasSize(1);
    }

    @Test
    void stopEndsTheTicking() throws Exception {
        acquireRenewed("stopped", 1);
        tick();
        redis.last().answer(1);
        watchdog.stop();
        tick();
        assertThat(redis.calls).hasSize(1);
        assertThat(everyTickRuns).hasValue(1);
        assertThat(timer.pendingCount()).as("no tick planned").isZero();
    }
}
