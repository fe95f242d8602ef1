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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link DistributedLock#unlock(Duration)}, the release with a minimum hold, on real Redis. The
 * clients' watchdog lease is 30 s, so a lease of at most the minimum shows that the hold was kept
 * with what was left of it and that the watchdog no longer renews it.
 */
class HoldAtLeastTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration MINIMUM = Duration.ofSeconds(5);

    @ParameterizedTest
    @EnumSource(value = LockType.class, names = "READ", mode = EnumSource.Mode.EXCLUDE)
    void anEarlyReleaseKeepsTheLockForTheRestOfTheMinimum(LockType type) throws Exception {
        Relock relock = clients.create();
        String name = "kept-" + type.name().toLowerCase();
        DistributedLock lock = type.newLock(relock, name);
        DistributedLock rival = type.newRival(clients.create(), name);
        lock.lock();
        lock.unlock(MINIMUM);
        long ttl = (Long) server.command("PTTL", name);
        assertThat(ttl).as("the lease: what is left of the minimum").isPositive().isLessThanOrEqualTo(MINIMUM.toMillis());
        assertThat(relock.heldLocks()).as("the client forgot the hold").isEmpty();
        assertThat(Threads.call(rival::tryLock).get(10, TimeUnit.SECONDS)).as("another owner's attempt").isFalse();
        assertThat(lock.isHeldByCurrentThread()).as("Redis still has this owner's hold").isTrue();
        // The owner may cut the minimum short.
        lock.unlock();
        assertThat(server.command("EXISTS", name)).isEqualTo(0L);
    }

    @Test
    void aReleaseAfterTheMinimumIsAnOrdinaryRelease() {
        DistributedLock lock = clients.create().getLock("passed");
        lock.lock();
        lock.unlock(Duration.ofNanos(1));
        assertThat(server.command("EXISTS", "passed")).isEqualTo(0L);
        lock.lock();
        lock.unlock(Duration.ZERO);
        assertThat(server.command("EXISTS", "passed")).isEqualTo(0L);
    }

    @Test
    void aReentrantOwnerKeepsOnlyItsLastHold() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("nested");
        lock.lock();
        lock.lock();
        lock.unlock(MINIMUM);
        String field = relock.clientId() + ":" + Thread.currentThread().getId();
        assertThat(server.command("HGET", "nested", field)).as("one hold released as unlock() does").isEqualTo("1");
        assertThat((Long) server.command("PTTL", "nested")).as("still the watchdog's lease").isGreaterThan(MINIMUM.toMillis());
        lock.unlock(MINIMUM);
        assertThat((Long) server.command("PTTL", "nested")).isPositive().isLessThanOrEqualTo(MINIMUM.toMillis());
        assertThat(relock.heldLocks()).isEmpty();
    }

    @Test
    void aFixedLeaseIsTheLongestTheLockIsKept() {
        DistributedLock lock = clients.create().getLock("capped");
        lock.lock(2, TimeUnit.SECONDS);
        lock.unlock(Duration.ofMinutes(1));
        assertThat((Long) server.command("PTTL", "capped")).isPositive().isLessThanOrEqualTo(2000L);
    }

    @Test
    void badArgumentsAndAbsentHoldsAreRefusedAsUnlockRefusesThem() {
        DistributedLock lock = clients.create().getLock("refused");
        assertThatThrownBy(() -> lock.unlock(MINIMUM)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("refused");
        lock.lock();
        assertThatThrownBy(() -> lock.unlock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("holdAtLeast");
        assertThatThrownBy(() -> lock.unlock(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holdAtLeast");
        assertThatThrownBy(() -> lock.unlockAsync(1, null)).isInstanceOf(NullPointerException.class);
        assertThat(lock.getHoldCount()).as("nothing changed").isEqualTo(1);
        lock.unlock();
    }

    @Test
    void readHoldsAndMultiLocksCannotBeKept() {
        Relock relock = clients.create();
        DistributedLock read = relock.getReadWriteLock("shared").readLock();
        read.lock();
        assertThatThrownBy(() -> read.unlock(MINIMUM)).isInstanceOf(UnsupportedOperationException.class);
        read.unlock();
        DistributedLock multi = relock.getMultiLock(relock.getLock("m1"), relock.getLock("m2"));
        multi.lock();
        assertThatThrownBy(() -> multi.unlock(MINIMUM)).isInstanceOf(UnsupportedOperationException.class);
        multi.unlock();
        assertThat(server.command("EXISTS", "m1")).isEqualTo(0L);
    }

    @Test
    void aLockHoldClosedWithAMinimumIsKeptAndClosedOnce() {
        DistributedLock lock = clients.create().getLock("hold");
        try (LockHold hold = lock.hold()) {
            hold.close(MINIMUM);
        }
        assertThat((Long) server.command("PTTL", "hold")).isPositive().isLessThanOrEqualTo(MINIMUM.toMillis());
    }

    @Test
    void anAsyncOwnerKeepsItsHold() throws Exception {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("async");
        long owner = Relock.newOwnerId();
        lock.lockAsync(owner).toCompletableFuture().get(10, TimeUnit.SECONDS);
        lock.unlockAsync(owner, MINIMUM).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat((Long) server.command("PTTL", "async")).isPositive().isLessThanOrEqualTo(MINIMUM.toMillis());
    }

    /**
     * A waiter parked on the holder's 30 s lease is woken by the keep and gets the lock when the
     * shorter lease ends. History checked: the waiter's lock() returns no earlier than the minimum
     * after the moment before the holder's lock() was called (so after the minimum counted from
     * the acquire), and long before the 30 s lease it saw while parking.
     */
    @ParameterizedTest
    @EnumSource(value = LockType.class, names = {"REENTRANT", "SIMPLE", "WRITE"})
    void aWaiterGetsTheLockOnlyOnceTheMinimumIsOver(LockType type) throws Exception {
        String name = "waited-" + type.name().toLowerCase();
        DistributedLock lock = type.newLock(clients.create(), name);
        DistributedLock waiter = type.newLock(clients.create(), name);
        Duration minimum = Duration.ofMillis(1500);
        long beforeAcquire = System.nanoTime();
        lock.lock();
        CompletableFuture<Long> acquiredAt = Threads.call(() -> {
            waiter.lock();
            long at = System.nanoTime();
            waiter.unlock();
            return at;
        });
        Eventually.await(Duration.ofSeconds(10), "a waiter subscribed",
                () -> ((Long) ((java.util.List<?>) server.command("PUBSUB", "NUMSUB",
                        (type == LockType.WRITE ? "redisson_rwlock:{" : "redisson_lock__channel:{") + name + "}")).get(1)) > 0);
        lock.unlock(minimum);
        long at = acquiredAt.get(20, TimeUnit.SECONDS);
        assertThat(at - beforeAcquire).as("ns from before the acquire to the waiter's")
                .isGreaterThanOrEqualTo(minimum.toNanos())
                .isLessThan(Clients.STEADY_WATCHDOG.toNanos());
    }
}
