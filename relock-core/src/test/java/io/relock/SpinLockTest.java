package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The contract suite on {@link Relock#getSpinLock(String)}, which waits without pub/sub. */
class SpinLockTest extends LockTypeContractTest {

    SpinLockTest() {
        super(LockType.SPIN);
    }

    @Test
    void aSpinningWaiterSubscribesToNothing() throws Exception {
        DistributedLock holder = newLock("spinning");
        holder.lock();
        DistributedLock waiterLock = newLock("spinning");
        CompletableFuture<Boolean> waiter = Threads.call(() -> waiterLock.tryLock(30, TimeUnit.SECONDS));
        awaitWaiting("spinning");
        assertThat(redisWaiters("spinning")).isZero();
        assertThat(server.command("PUBSUB", "NUMPAT")).isEqualTo(0L);
        holder.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void spinAndPubSubLocksOnOneNameExcludeEachOther() throws Exception {
        Relock relock = clients.create();
        DistributedLock spin = relock.getSpinLock("shared-name");
        DistributedLock plain = clients.create().getLock("shared-name");
        plain.lock();
        assertThat(Threads.call(() -> spin.tryLock()).get()).isFalse();
        CompletableFuture<Boolean> waiter = Threads.call(() -> spin.tryLock(30, TimeUnit.SECONDS));
        awaitWaiting("shared-name");
        plain.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }
}
