package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A call with a wait rides through a server that refuses connections for a moment (a restart), as
 * it waits for a holder; a call without a wait fails fast.
 */
class RideThroughReconnectTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    private static final String PROBE = "probe";

    @Test
    void lockRidesThroughARestartOfTheServer() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        Relock relock = client(started);
        DistributedLock lock = relock.getLock("restart");
        server.kill();
        awaitRefused(relock);

        CompletableFuture<Long> locking = Threads.call(() -> {
            lock.lock();
            return Thread.currentThread().getId();
        });
        assertThat(started.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        server.restart();

        long owner = locking.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isHeldByThread(owner)).isTrue();
        assertThat(clients.create().getLock("restart").tryLock()).isFalse();
    }

    @Test
    void tryLockWithAWaitRidesThroughRefusedConnectionsWithinItsWait() throws Exception {
        try (FaultProxy proxy = FaultProxy.to(server)) {
            CountDownLatch started = new CountDownLatch(1);
            Relock relock = Relock.create(RelockConfig.builder().singleServer(proxy.uri())
                    .commandTimeout(Clients.COMMAND_TIMEOUT).observer(startedObserver(started)).build());
            try {
                DistributedLock lock = relock.getLock("refused");
                proxy.refuse();
                awaitRefused(relock);

                CompletableFuture<Boolean> trying = Threads.call(() -> lock.tryLock(5, TimeUnit.SECONDS));
                assertThat(started.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                proxy.heal();

                assertThat(trying.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                assertThat(server.command("EXISTS", "refused")).isEqualTo(1L);
            } finally {
                relock.close();
            }
        }
    }

    @Test
    void tryLockWithoutAWaitFailsAtOnce() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("no-wait");
        server.kill();
        awaitRefused(relock);
        long start = System.nanoTime();
        assertThatThrownBy(lock::tryLock).isInstanceOf(RelockConnectionException.class).hasCauseInstanceOf(
                io.lettuce.core.RedisException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("fails fast, well within the command timeout").isLessThan(Clients.COMMAND_TIMEOUT.toMillis());
    }

    @Test
    void tryLockWithAWaitAgainstAServerThatStaysDownThrowsOnceItsWaitIsOver() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("stays-down");
        server.kill();
        awaitRefused(relock);
        long start = System.nanoTime();
        assertThatThrownBy(() -> lock.tryLock(300, TimeUnit.MILLISECONDS))
                .isInstanceOf(RelockConnectionException.class).hasMessageContaining("'stays-down'")
                .cause().isNotNull();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("not before its wait")
                .isGreaterThanOrEqualTo(300);
    }

    @Test
    void lockInterruptiblyRidingThroughAnOutageAnswersAnInterrupt() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        Relock relock = client(started);
        DistributedLock lock = relock.getLock("interrupted");
        server.kill();
        awaitRefused(relock);
        Thread[] caller = new Thread[1];
        CompletableFuture<Void> locking = Threads.run(() -> {
            caller[0] = Thread.currentThread();
            lock.lockInterruptibly();
            return null;
        });
        assertThat(started.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        caller[0].interrupt();
        assertThatThrownBy(() -> locking.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InterruptedException.class);
        assertThat(relock.heldLocks()).isEmpty();
    }

    private Relock client(CountDownLatch started) {
        Relock relock = clients.create();
        relock.addObserver(startedObserver(started));
        return relock;
    }

    /** Counts down when an acquire of a lock other than the probe starts. */
    private static LockObserver startedObserver(CountDownLatch started) {
        return new LockObserver() {
            @Override
            public Object onAcquireStart(String lockName, String lockType, long ownerId) {
                if (!lockName.equals(PROBE)) {
                    started.countDown();
                }
                return null;
            }
        };
    }

    /** Until the client has seen the server refuse: a call without a wait then fails. */
    private static void awaitRefused(Relock relock) {
        DistributedLock probe = relock.getLock(PROBE);
        Eventually.await(PROMPTLY, "the client sees the server refuse", () -> {
            try {
                probe.tryLock();
                return false;
            } catch (RelockConnectionException expected) {
                return true;
            }
        });
    }
}
