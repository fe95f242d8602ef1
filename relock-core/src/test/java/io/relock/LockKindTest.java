package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LockInfo#kind()} tells each lock type from its data alone, and
 * {@link Relock#forceUnlock(String)} removes a lock with its own type's release, so that its
 * waiters are woken at once rather than at the end of the holder's lease.
 */
class LockKindTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    @Test
    void eachLockTypeIsToldFromItsData() {
        Relock holder = clients.create();
        Relock inspector = clients.create();
        holder.getLock("r").lock();
        holder.getSpinLock("s").lock();
        holder.getFairLock("f").lock();
        holder.getFencedLock("k").lock();
        holder.getSimpleLock("p").lock();
        holder.getReadWriteLock("rw").readLock().lock();
        holder.getReadWriteLock("w").writeLock().lock();
        server.command("HSET", "profile", "name", "x");
        server.command("SADD", "members", "x");

        assertThat(inspector.getLockInfo("r").kind()).isEqualTo(LockInfo.Kind.REENTRANT);
        assertThat(inspector.getLockInfo("s").kind()).isEqualTo(LockInfo.Kind.REENTRANT);
        assertThat(inspector.getLockInfo("f").kind()).as("a fair lock nobody waits for leaves no queue")
                .isEqualTo(LockInfo.Kind.REENTRANT);
        assertThat(inspector.getLockInfo("k").kind()).isEqualTo(LockInfo.Kind.FENCED);
        assertThat(inspector.getLockInfo("p").kind()).isEqualTo(LockInfo.Kind.SIMPLE);
        assertThat(inspector.getLockInfo("rw").kind()).isEqualTo(LockInfo.Kind.READ_WRITE);
        assertThat(inspector.getLockInfo("w").kind()).isEqualTo(LockInfo.Kind.READ_WRITE);
        assertThat(inspector.getLockInfo("never").kind()).isEqualTo(LockInfo.Kind.NONE);
        assertThat(inspector.getLockInfo("profile").kind()).isEqualTo(LockInfo.Kind.NOT_A_LOCK);
        assertThat(inspector.getLockInfo("members").kind()).isEqualTo(LockInfo.Kind.NOT_A_LOCK);

        Relock waiter = clients.create();
        CompletableFuture<Boolean> queued = Threads.call(() ->
                waiter.getFairLock("f").tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS));
        Eventually.await(PROMPTLY, "a waiter queued", () -> (Long) server.command("LLEN", "{f}:queue") == 1);
        assertThat(inspector.getLockInfo("f").kind()).isEqualTo(LockInfo.Kind.FAIR);
        holder.getFairLock("f").unlock();
        assertThat(queued.join()).isTrue();

        holder.getFencedLock("k").unlock();
        assertThat(inspector.getLockInfo("k").kind()).as("a free fenced lock keeps its token")
                .isEqualTo(LockInfo.Kind.FENCED);
    }

    @Test
    void forceUnlockByNameWakesAFairLocksNextWaiterAtOnce() throws Exception {
        Relock holder = clients.create();
        Relock waiter = clients.create();
        Relock operator = clients.create();
        holder.getFairLock("queue").lock();
        CompletableFuture<Boolean> next = Threads.call(() ->
                waiter.getFairLock("queue").tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS));
        Eventually.await(PROMPTLY, "the waiter queued", () -> (Long) server.command("LLEN", "{queue}:queue") == 1);

        assertThat(operator.forceUnlock("queue")).isTrue();
        // The holder's lease is 30 s; only the fair lock's own release wakes the waiter sooner.
        assertThat(next.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void forceUnlockByNameRemovesEachTypeAndWakesItsWaiters() throws Exception {
        Relock holder = clients.create();
        Relock operator = clients.create();
        holder.getLock("r").lock();
        holder.getSimpleLock("p").lock();
        holder.getReadWriteLock("rw").readLock().lock();
        holder.getReadWriteLock("w").writeLock().lock();
        for (String name : new String[] {"r", "p", "rw", "w"}) {
            assertThat(operator.forceUnlock(name)).as(name).isTrue();
            assertThat(operator.getLockInfo(name).holders()).as(name).isEmpty();
        }
        Relock waiterClient = clients.create();
        holder.getReadWriteLock("again").writeLock().lock();
        CompletableFuture<Boolean> reader = Threads.call(() -> waiterClient.getReadWriteLock("again").readLock()
                .tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS));
        Eventually.await(PROMPTLY, "the reader waits", () -> operator.getLockInfo("again").waitingClients() == 1);
        assertThat(operator.forceUnlock("again")).isTrue();
        assertThat(reader.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void forceUnlockByNameOfNothingOrOfOtherDataRemovesNothing() {
        Relock operator = clients.create();
        assertThat(operator.forceUnlock("never")).isFalse();
        server.command("HSET", "profile", "name", "x");
        assertThat(operator.forceUnlock("profile")).as("data that no lock writes").isFalse();
        assertThat(server.command("HGET", "profile", "name")).isEqualTo("x");
        assertThatThrownBy(() -> operator.forceUnlock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
    }
}
