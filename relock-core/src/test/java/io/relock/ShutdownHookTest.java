package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A JVM that stops without close(): the shutdown hook releases, yields and closes, within its bound. */
class ShutdownHookTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    /** The promise: lock and leadership free within 2 s of SIGTERM. */
    private static final long BOUND_MILLIS = 2000;

    @Test
    void sigtermWithTheDefaultsFreesEveryLockAndTheLeadershipWithinTwoSeconds() throws Exception {
        Relock relock = clients.create();
        try (ChildJvm child = ChildJvm.start(ShutdownHolderMain.class, server.uri(), "job", "leader")) {
            child.awaitLine("READY", LockContractTest.CHILD_START);
            DistributedLock lock = relock.getLock("job");
            DistributedLock async = relock.getLock("job-async");
            assertThat(lock.tryLock()).isFalse();
            assertThat(async.tryLock()).isFalse();
            CountDownLatch elected = new CountDownLatch(1);
            LeaderElection election = relock.getLeaderElection("leader");
            election.start(new LeadershipListener() {
                @Override
                public void onElected(Leadership leadership) {
                    elected.countDown();
                }

                @Override
                public void onRevoked(Leadership leadership) {
                    // not part of this test
                }
            });
            assertThat(elected.getCount()).isOne();

            long stopped = System.nanoTime();
            child.terminate();
            assertThat(lock.tryLock(BOUND_MILLIS, TimeUnit.MILLISECONDS)).as("the lock (held twice) freed").isTrue();
            assertThat(async.tryLock(left(stopped), TimeUnit.MILLISECONDS)).as("an async owner's lock freed").isTrue();
            assertThat(elected.await(left(stopped), TimeUnit.MILLISECONDS)).as("the leadership yielded").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped)).isLessThan(BOUND_MILLIS);

            assertThat(child.awaitExit(PROMPTLY)).as("exit code after SIGTERM").isEqualTo(143);
            assertThat(child.output()).contains("REVOKED").contains("JVM shutdown: Relock client")
                    .contains("released 2 lock(s)");
            lock.unlock();
            async.unlock();
            election.close();
        }
    }

    @Test
    void withTheOptOutSigtermLeavesTheLockAndTheLeadershipToTheirLeases() throws Exception {
        Relock relock = clients.create();
        try (ChildJvm child = ChildJvm.start(ShutdownHolderMain.class, server.uri(), "kept", "kept-leader", "keep")) {
            child.awaitLine("READY", LockContractTest.CHILD_START);
            child.terminate();
            assertThat(child.awaitExit(PROMPTLY)).isEqualTo(143);
            // The process is gone; its holds stay until the 30 s default lease runs out.
            assertThat(relock.getLock("kept").tryLock()).isFalse();
            assertThat(relock.getLockInfo("kept").remainTimeToLive())
                    .isGreaterThan(RelockConfig.DEFAULT_WATCHDOG_TIMEOUT.toMillis() / 2);
            assertThat(relock.getLock("kept-leader").tryLock()).isFalse();
            assertThat(relock.getLeaderElection("kept-leader").leader()).isPresent();
            assertThat(child.output()).doesNotContain("JVM shutdown: Relock client");
        }
    }

    @Test
    void theHookReleasesWhatTheClientHoldsAndCloseRemovesIt() throws Exception {
        Relock holder = clients.create();
        DistributedLock lock = holder.getLock("hooked");
        lock.lock();
        lock.lock();
        Thread hook = holder.shutdownHook();
        assertThat(hook).isNotNull();
        hook.run(); // as the JVM would at shutdown
        assertThat(clients.create().getLock("hooked").tryLock()).isTrue();
        assertThat(holder.trackedHolds()).isZero();
        holder.close();
        assertThat(holder.shutdownHook()).isNull();
        assertThat(Runtime.getRuntime().removeShutdownHook(hook)).as("close() removed the hook").isFalse();
    }

    @Test
    void manyClientsCreatedAndClosedLeaveNoHookBehind() {
        RelockConfig config = RelockConfig.builder().singleServer(server.uri()).build();
        for (int i = 0; i < 20; i++) {
            Relock relock = Relock.create(config);
            Thread hook = relock.shutdownHook();
            relock.close();
            assertThat(Runtime.getRuntime().removeShutdownHook(hook)).isFalse();
        }
        try (Relock optedOut = Relock.create(RelockConfig.builder().singleServer(server.uri())
                .releaseOnShutdown(false).build())) {
            assertThat(optedOut.shutdownHook()).isNull();
        }
    }

    @Test
    void theHookEndsWithinItsBoundWhenRedisIsDownAndNeverThrows() throws Exception {
        Relock holder = clients.create();
        holder.getLock("down").lock();
        server.kill();
        long start = System.nanoTime();
        holder.shutdownHook().run();
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // 2 s by the bound, with room for a loaded machine's scheduling.
        assertThat(took).isLessThan(BOUND_MILLIS + 1000);
        assertThat(holder.trackedHolds()).isOne();
        holder.close();
    }

    @Test
    void closeDuringTheHookWaitsForItAndNeitherDeadlocks() throws Exception {
        Relock holder = clients.create();
        holder.getLock("racing").lock();
        Thread hook = holder.shutdownHook();
        CompletableFuture<Void> hookRun = CompletableFuture.runAsync(hook);
        CompletableFuture<Void> closed = CompletableFuture.runAsync(holder::close);
        hookRun.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        closed.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(holder.shutdownHook()).isNull();
        assertThatThrownBy(() -> holder.getLock("racing")).isInstanceOf(IllegalStateException.class);
    }

    private static long left(long sinceNanos) {
        return Math.max(1, BOUND_MILLIS - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos));
    }
}
