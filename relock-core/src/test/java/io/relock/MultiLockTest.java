package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The contract suite on {@link Relock#getMultiLock}, plus all-or-nothing behaviour. */
class MultiLockTest extends LockContractTest {

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return client.getMultiLock(client.getLock(name + ":1"), client.getLock(name + ":2"));
    }

    @Override
    protected void awaitWaiting(String name) {
        Eventually.await(PROMPTLY, "a waiter on a member of '" + name + "'",
                () -> redisWaiters(name + ":1") + redisWaiters(name + ":2") > 0);
    }

    @Test
    void overlappingMultiLocksOnDifferentClientsNeverDeadlockNorOverlap() throws Exception {
        Relock a = clients.create();
        Relock b = clients.create();
        Relock c = clients.create();
        DistributedLock first = a.getMultiLock(a.getLock("x"), b.getLock("y"));
        DistributedLock second = b.getMultiLock(c.getLock("z"), b.getLock("y"), a.getLock("x"));
        DistributedLock third = c.getMultiLock(c.getLock("z"), a.getLock("x"));
        // Every pair of these sets shares a member, so at most one of them may be inside at a time.
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        DistributedLock[] multis = {first, second, third};
        for (int t = 0; t < 9; t++) {
            DistributedLock multi = multis[t % 3];
            workers.add(Threads.run(() -> {
                gate.await();
                for (int i = 0; i < 10; i++) {
                    multi.lock();
                    try {
                        if (inside.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.yield();
                        inside.decrementAndGet();
                    } finally {
                        multi.unlock();
                    }
                }
                return null;
            }));
        }
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        assertThat(overlaps.get()).isZero();
        assertThat(a.getLock("x").isLocked() || b.getLock("y").isLocked() || c.getLock("z").isLocked()).isFalse();
    }

    @Test
    void aMemberHeldElsewhereMakesTryLockFailAfterTheWaitLeavingNothingHeld() throws Exception {
        Relock relock = clients.create();
        clients.create().getLock("m3").lock();
        DistributedLock multi = relock.getMultiLock(relock.getLock("m1"), relock.getLock("m2"), relock.getLock("m3"));
        long start = System.nanoTime();
        assertThat(multi.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(waited).isGreaterThanOrEqualTo(300).isLessThan(PROMPTLY.toMillis());
        assertThat(relock.getLock("m1").isLocked()).isFalse();
        assertThat(relock.getLock("m2").isLocked()).isFalse();
    }

    @Test
    void badMemberListsAreRejected() {
        Relock relock = clients.create();
        assertThatThrownBy(() -> relock.getMultiLock()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("locks");
        assertThatThrownBy(() -> relock.getMultiLock(relock.getLock("a"), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("locks[1]");
        assertThatThrownBy(() -> relock.getMultiLock(relock.getLock("a"), relock.getLock("a")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("twice");
    }
}
