package io.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostEvent;
import io.relock.RelockConfig;
import io.relock.RelockTimeoutException;
import io.relock.internal.ClientRuntime;
import io.relock.internal.engine.AcquisitionState.State;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.redis.Script;
import io.relock.internal.support.Args;
import io.relock.internal.types.LockTypes;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The writes a hand-over makes without the new owner waiting for them (a transfer between owners
 * of one client, a claim of another client's hand-off), with their replies lost or late: a
 * {@link FaultProxy} between the client and Redis lets the call run and cuts or holds back its
 * reply, and the waiter is parked before the release, so the hand-over path is the one taken.
 * Each test states the history it checks: what Redis holds is what the clients believe they
 * hold, a rival is excluded exactly while it should be, and a hold nobody can vouch for is
 * reported lost and undone.
 */
class HandOverFaultTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private RedisServer server;
    private FaultProxy proxy;
    private ClientRuntime proxied;
    private ClientRuntime direct;
    private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        server = RedisServer.start();
        proxy = FaultProxy.to(server);
        proxied = ClientRuntime.start(config(proxy.uri()));
        proxied.addListener(lost::add);
        direct = ClientRuntime.start(config(server.uri()));
    }

    private static RelockConfig config(String uri) {
        return RelockConfig.builder().singleServer(uri).commandTimeout(COMMAND_TIMEOUT)
                .watchdogTimeout(Duration.ofSeconds(30)).build();
    }

    @AfterEach
    void stop() {
        proxied.close();
        direct.close();
        proxy.close();
        server.close();
    }

    private static LockEngine lock(ClientRuntime runtime, String name) {
        return (LockEngine) LockTypes.REENTRANT.create(runtime, name);
    }

    private Map<String, Long> holders(String name) {
        return direct.lockInfo(name).holders();
    }

    private static <T> T within(CompletableFuture<T> future) throws Exception {
        return future.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static void awaitParked(Acquisition waiter) {
        Eventually.await(PROMPTLY, waiter + " parked", () -> waiter.state() == State.PARKED);
    }

    /** Lock {@code name} held by owner 5 of another client, owner 1 of this one queued and parked, its claim to be cut. */
    private record ClaimCut(LockEngine holder, LockEngine lock, Acquisition waiter, FaultProxy.Fault cut) {}

    /**
     * Owner 5 of the direct client holds {@code name}; owner 1 of the proxied client queues and
     * parks; the next acquire script through the proxy, the claim once 5 releases, is cut after
     * Redis ran it and before its reply.
     */
    private ClaimCut queuedWithClaimCut(String name) throws Exception {
        LockEngine holder = lock(direct, name);
        assertThat(within(holder.acquireAsync(5, 0, Args.WATCHDOG_LEASE)).acquired()).isTrue();
        LockEngine lock = lock(proxied, name);
        Acquisition waiter = lock.start(1, TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        Eventually.await(PROMPTLY, "queued and parked", () -> waiter.state() == State.PARKED
                && (Long) server.command("ZCARD", "{" + name + "}:handoff") == 1);
        return new ClaimCut(holder, lock, waiter, proxy.cutBeforeReply(Script.LOCK_ACQUIRE.sha(false)));
    }

    /**
     * History: owners 1 and 2 of one client; 1 holds, 2 waits behind it; 1's last unlock hands
     * the hold to 2 and the transfer's reply is lost. 1's unlock returns (the retry finds the
     * transfer done and answers as it did), 2 holds exactly one hold and nothing is reported
     * lost, a rival is excluded while 2 holds, and once 2 unlocks the lock is free: handed over
     * once, not twice, and not lost.
     */
    @Test
    void aHandOverWhoseReplyIsLostHandsTheHoldOverOnce() throws Exception {
        LockEngine lock = lock(proxied, "handed");
        assertThat(within(lock.acquireAsync(1, 0, Args.WATCHDOG_LEASE)).acquired()).isTrue();
        Acquisition waiter = lock.start(2, TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        awaitParked(waiter);
        FaultProxy.Fault cut = proxy.cutBeforeReply(Script.LOCK_HAND_OVER.sha(false));

        within(lock.release(1));

        assertThat(cut.triggered()).isTrue();
        assertThat(within(waiter.result).acquired()).isTrue();
        assertThat(holders("handed")).containsExactly(Map.entry(proxied.clientId() + ":2", 1L));
        LockEngine rival = lock(direct, "handed");
        assertThat(within(rival.acquireAsync(9, 0, Args.WATCHDOG_LEASE)).acquired()).isFalse();
        within(lock.release(2));
        assertThat(holders("handed")).isEmpty();
        assertThat(lost).isEmpty();
        assertThatThrownBy(() -> within(lock.release(2))).hasCauseInstanceOf(IllegalMonitorStateException.class);
    }

    /**
     * History: owners 1 and 2 of one client; 1 holds, 2 waits behind it; 1's last unlock hands
     * the hold to 2 and the transfer's reply comes only after three command timeouts. 1's unlock
     * fails with a timeout; 2 was told it holds, so its hold is reported lost, and it is undone on
     * Redis behind the late transfer: the lock ends free, held by nobody that does not know it.
     */
    @Test
    void aHandOverWhoseOutcomeStaysUnknownIsReportedLostAndUndone() throws Exception {
        LockEngine lock = lock(proxied, "unknown");
        assertThat(within(lock.acquireAsync(1, 0, Args.WATCHDOG_LEASE)).acquired()).isTrue();
        Acquisition waiter = lock.start(2, TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        awaitParked(waiter);
        proxy.delayReplies(Script.LOCK_HAND_OVER.sha(false), COMMAND_TIMEOUT.multipliedBy(3));

        assertThatThrownBy(() -> within(lock.release(1))).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RelockTimeoutException.class);

        assertThat(within(waiter.result).acquired()).as("told before the reply").isTrue();
        Eventually.await(PROMPTLY, "the receiver's hold reported lost", () -> lost.size() == 1);
        assertThat(lost.get(0).ownerThreadId()).isEqualTo(2);
        Eventually.await(PROMPTLY, "the transfer undone on Redis", () -> holders("unknown").isEmpty());
        assertThat(proxied.heldLocks()).as("the receiver does not count the hold as held")
                .noneMatch(held -> held.ownerId() == 2);
        // Replies on the proxied connection come late until the held-back one is through.
        Eventually.await(PROMPTLY, "the receiver's unlock says the hold was lost",
                () -> lock.release(2).handle((ignored, error) -> error).join() instanceof java.util.concurrent.CompletionException failure
                        && failure.getCause() instanceof IllegalMonitorStateException);
    }

    /**
     * History: another client holds; this client's owner 1 queues and parks; the holder unlocks,
     * handing the lock to 1, which returns from its acquire at once and claims the hand-off; the
     * claim's reply is lost. The retry finds the claim done: 1 holds one hold with its own lease,
     * nothing is reported lost, a rival is excluded, and 1's unlock frees the lock.
     */
    @Test
    void aClaimWhoseReplyIsLostKeepsTheHandedOverHold() throws Exception {
        ClaimCut handed = queuedWithClaimCut("claimed");
        LockEngine holder = handed.holder();
        LockEngine lock = handed.lock();
        Acquisition waiter = handed.waiter();
        FaultProxy.Fault cut = handed.cut();

        within(holder.release(5));

        assertThat(within(waiter.result).acquired()).isTrue();
        cut.awaitTriggered(PROMPTLY);
        Eventually.await(PROMPTLY, "the claim's retry is answered",
                () -> !proxied.watchdog().get(lock, 1).writePending());
        assertThat(holders("claimed")).containsExactly(Map.entry(proxied.clientId() + ":1", 1L));
        assertThat(direct.lockInfo("claimed").remainTimeToLive()).as("the caller's lease")
                .isGreaterThan(Acquisition.GRANT_LEASE_MILLIS);
        assertThat(within(holder.acquireAsync(6, 0, Args.WATCHDOG_LEASE)).acquired()).isFalse();
        within(lock.release(1));
        assertThat(holders("claimed")).isEmpty();
        assertThat(lost).isEmpty();
    }

    /**
     * History: as above, but owner 1 re-enters as soon as it is told it holds, while the claim's
     * reply is being lost. The re-entry follows the claim (its retry included), so the retry still
     * recognises the claim as done instead of counting a hold of its own: 1 holds two holds, no
     * more, and after two unlocks the lock is free, with nothing held that no client knows of.
     */
    @Test
    void aReentryWhileTheClaimIsRetriedCountsOneHoldOnTopOfIt() throws Exception {
        ClaimCut handed = queuedWithClaimCut("claimed-again");
        LockEngine lock = handed.lock();

        within(handed.holder().release(5));
        CompletableFuture<Attempt> reentry = handed.waiter().result
                .thenCompose(held -> lock.acquireAsync(1, 0, Args.WATCHDOG_LEASE));

        assertThat(within(reentry).acquired()).isTrue();
        assertThat(handed.cut().triggered()).isTrue();
        assertThat(holders("claimed-again")).containsExactly(Map.entry(proxied.clientId() + ":1", 2L));
        within(lock.release(1));
        within(lock.release(1));
        assertThat(holders("claimed-again")).isEmpty();
        assertThat(lost).isEmpty();
    }

    /**
     * History: owners 1 and 2 of one client; 2 takes 1's hold in a transfer whose reply is lost,
     * and re-enters as soon as it is told it holds. The re-entry follows the transfer (its retry
     * included), so the retry still finds the transfer done: 2 holds two holds, nothing is
     * reported lost, and after 2's two unlocks the lock is free.
     */
    @Test
    void aReentryWhileTheTransferIsRetriedCountsOneHoldOnTopOfIt() throws Exception {
        LockEngine lock = lock(proxied, "handed-again");
        assertThat(within(lock.acquireAsync(1, 0, Args.WATCHDOG_LEASE)).acquired()).isTrue();
        Acquisition waiter = lock.start(2, TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        awaitParked(waiter);
        FaultProxy.Fault cut = proxy.cutBeforeReply(Script.LOCK_HAND_OVER.sha(false));

        CompletableFuture<Void> release = lock.release(1);
        CompletableFuture<Attempt> reentry = waiter.result.thenCompose(held -> lock.acquireAsync(2, 0, Args.WATCHDOG_LEASE));

        within(release);
        assertThat(within(reentry).acquired()).isTrue();
        assertThat(cut.triggered()).isTrue();
        assertThat(holders("handed-again")).containsExactly(Map.entry(proxied.clientId() + ":2", 2L));
        within(lock.release(2));
        within(lock.release(2));
        assertThat(holders("handed-again")).isEmpty();
        assertThat(lost).isEmpty();
    }
}
