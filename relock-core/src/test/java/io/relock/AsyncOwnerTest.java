package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the faces that tie a hold to a piece of work build on: a cancelled async acquire leaves
 * nothing behind (no hold, no place in the queue, no grant that stalls the next owner), and
 * {@link DistributedLock#addLostListener} reports one owner's lost hold of one lock and nothing
 * else. History checked: after a cancel, nothing is held that no client believes it holds.
 */
class AsyncOwnerTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    @Test
    void aCancelledWaitLeavesTheQueueAndTheNextOwnerGetsTheLockAtOnce() throws Exception {
        Relock a = clients.create();
        Relock b = clients.create();
        Relock c = clients.create();
        DistributedLock held = a.getLock("cancel:wait");
        held.lock();
        CompletableFuture<Void> waiting = b.getLock("cancel:wait").lockAsync(Relock.newOwnerId()).toCompletableFuture();
        Eventually.await(PROMPTLY, "b waits", () -> a.getLockInfo("cancel:wait").waitingClients() == 1);

        assertThat(waiting.cancel(false)).isTrue();
        assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
        Eventually.await(PROMPTLY, "b stopped waiting", () -> a.getLockInfo("cancel:wait").waitingClients() == 0);
        held.unlock();

        // Had b's place in the queue survived, the release would have granted it the lock.
        DistributedLock next = c.getLock("cancel:wait");
        assertThat(next.tryLock()).isTrue();
        next.unlock();
    }

    @Test
    void aCancelledWaitOfEveryLockTypeLeavesNothingHeld() throws Exception {
        List<BiFunction<Relock, String, DistributedLock>> types = List.of(Relock::getLock, Relock::getFairLock,
                Relock::getSpinLock, Relock::getSimpleLock, Relock::getFencedLock,
                (client, name) -> client.getReadWriteLock(name).writeLock(),
                (client, name) -> client.getMultiLock(client.getLock(name + ":1"), client.getLock(name + ":2")));
        Relock a = clients.create();
        Relock b = clients.create();
        for (int i = 0; i < types.size(); i++) {
            String name = "cancel:type:" + i;
            DistributedLock held = types.get(i).apply(a, name);
            DistributedLock waiter = types.get(i).apply(b, name);
            long owner = Relock.newOwnerId();
            held.lock();
            CompletableFuture<Void> waiting = waiter.lockAsync(owner).toCompletableFuture();
            assertThat(waiting.cancel(false)).as(name).isTrue();
            held.unlock();

            // A multi-lock's round under way at the cancel may still win its members, and then
            // releases them: the lock is free once the cancelled acquire has settled.
            Eventually.await(PROMPTLY, name + " can be taken again", waiter::tryLock);
            assertThat(waiter.isHeldByThread(owner)).as(name).isFalse();
            waiter.unlock();
        }
    }

    @Test
    void aCancelThatComesAfterTheAcquireCompletedLeavesTheHold() {
        Relock a = clients.create();
        DistributedLock lock = a.getLock("cancel:late");
        long owner = Relock.newOwnerId();
        CompletableFuture<Void> acquired = lock.lockAsync(owner).toCompletableFuture();
        acquired.join();

        assertThat(acquired.cancel(false)).isFalse();
        assertThat(lock.isHeldByThread(owner)).isTrue();
        lock.unlockAsync(owner).toCompletableFuture().join();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void cancelsRacingWithReleasesNeverLeaveTheLockStuck() throws Exception {
        Relock a = clients.create();
        Relock b = clients.create();
        DistributedLock held = a.getLock("cancel:race");
        DistributedLock waiter = b.getLock("cancel:race");
        for (int round = 0; round < 40; round++) {
            long holder = Relock.newOwnerId();
            long owner = Relock.newOwnerId();
            held.lockAsync(holder).toCompletableFuture().join();
            CompletableFuture<Void> waiting = waiter.lockAsync(owner).toCompletableFuture();
            CompletableFuture<Void> release = held.unlockAsync(holder).toCompletableFuture();
            boolean cancelled = waiting.cancel(false);
            release.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            if (!cancelled) {
                // The grant came first: the owner holds it and knows it.
                waiting.join();
                waiter.unlockAsync(owner).toCompletableFuture().join();
            }
            String afterRound = "round " + round + (cancelled ? " (cancel won)" : " (grant won)");
            Eventually.await(PROMPTLY, afterRound + ": the lock is free", () -> !waiter.isLocked());
            assertThat(waiter.isHeldByThread(owner)).as(afterRound).isFalse();
        }
    }

    @Test
    void aLostHoldIsReportedToItsOwnersListenerOnly() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        Relock operator = clients.create();
        DistributedLock lock = holder.getLock("lost:one");
        DistributedLock other = holder.getLock("lost:other");
        long owner = Relock.newOwnerId();
        long bystander = Relock.newOwnerId();
        CompletableFuture<LockLostEvent> lost = new CompletableFuture<>();
        List<LockLostEvent> misdirected = new CopyOnWriteArrayList<>();
        List<LockLostEvent> afterClose = new CopyOnWriteArrayList<>();
        lock.lockAsync(owner).toCompletableFuture().join();
        other.lockAsync(bystander).toCompletableFuture().join();
        ListenerRegistration registration = lock.addLostListener(owner, lost::complete);
        lock.addLostListener(bystander, misdirected::add);
        other.addLostListener(owner, misdirected::add);
        lock.addLostListener(owner, afterClose::add).close();

        assertThat(operator.forceUnlock("lost:one")).isTrue();
        LockLostEvent event = lost.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(event.lockName()).isEqualTo("lost:one");
        assertThat(event.ownerThreadId()).isEqualTo(owner);
        assertThat(event.cause()).isInstanceOf(LockForceUnlockedException.class);
        assertThat(misdirected).isEmpty();
        assertThat(afterClose).isEmpty();
        assertThat(other.isHeldByThread(bystander)).isTrue();
        registration.close();
        registration.close();
        other.unlockAsync(bystander).toCompletableFuture().join();
    }

    @Test
    void aMultiLockReportsALostMember() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        DistributedLock multi = holder.getMultiLock(holder.getLock("lost:m1"), holder.getLock("lost:m2"));
        long owner = Relock.newOwnerId();
        multi.lockAsync(owner).toCompletableFuture().join();
        CompletableFuture<LockLostEvent> lost = new CompletableFuture<>();
        multi.addLostListener(owner, lost::complete);

        server.command("DEL", "lost:m2");

        LockLostEvent event = lost.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event.lockName()).isEqualTo("lost:m2");
        assertThat(event.ownerThreadId()).isEqualTo(owner);
    }

    @Test
    void anAsyncOwnerOfAFencedLockGetsATokenThatGrowsWithEveryNewHolder() {
        Relock a = clients.create();
        Relock b = clients.create();
        FencedLock first = a.getFencedLock("fenced:async");
        FencedLock second = b.getFencedLock("fenced:async");
        long owner = Relock.newOwnerId();
        long rival = Relock.newOwnerId();

        long token = first.lockAndGetTokenAsync(-1, TimeUnit.MILLISECONDS, owner).toCompletableFuture().join();
        assertThat(first.tryLockAndGetTokenAsync(0, -1, TimeUnit.MILLISECONDS, owner).toCompletableFuture().join())
                .as("re-entry keeps the holder's token").isEqualTo(token);
        assertThat(second.tryLockAndGetTokenAsync(0, -1, TimeUnit.MILLISECONDS, rival).toCompletableFuture().join())
                .as("busy").isNull();
        assertThat(first.getToken()).isEqualTo(token);
        first.unlockAsync(owner).toCompletableFuture().join();
        first.unlockAsync(owner).toCompletableFuture().join();

        Long next = second.tryLockAndGetTokenAsync(0, -1, TimeUnit.MILLISECONDS, rival).toCompletableFuture().join();
        assertThat(next).isGreaterThan(token);
        second.unlockAsync(rival).toCompletableFuture().join();
        assertThatThrownBy(() -> first.lockAndGetTokenAsync(0, TimeUnit.MILLISECONDS, owner))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
    }

    @Test
    void aNullListenerIsRejected() {
        DistributedLock lock = clients.create().getLock("lost:null");
        assertThatThrownBy(() -> lock.addLostListener(1, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("listener");
    }

    @Test
    void theLockLostExceptionNamesTheLockAndKeepsTheCause() {
        LockForceUnlockedException cause = new LockForceUnlockedException("order:7 was force-unlocked");
        LockLostException lost = new LockLostException("order:7", -3, cause);

        assertThat(lost).isInstanceOf(RelockException.class).hasMessageContaining("order:7").hasCause(cause);
        assertThat(lost.lockName()).isEqualTo("order:7");
        assertThat(lost.ownerId()).isEqualTo(-3);
    }
}
