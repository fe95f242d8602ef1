package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A client made with connectInBackground starts while Redis is down and works once it is up. */
class StartWithoutRedisTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    @Test
    void aClientCreatedWhileRedisIsDownFailsCallsUntilItIsUpThenLocks() throws Exception {
        server.kill(); // nothing listens on its port now
        RelockConfig config = RelockConfig.builder().singleServer(server.uri())
                .commandTimeout(Clients.COMMAND_TIMEOUT).connectInBackground(true).build();
        try (Relock relock = Relock.create(config)) {
            assertThat(relock.isConnected()).isFalse();
            DistributedLock lock = relock.getLock("early");

            long start = System.nanoTime();
            assertThatThrownBy(lock::tryLock).isInstanceOf(RelockConnectionException.class)
                    .hasMessageContaining("not connected to Redis");
            assertThatThrownBy(() -> relock.getLockInfo("early")).isInstanceOf(RelockConnectionException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("calls without a wait fail fast")
                    .isLessThan(Clients.COMMAND_TIMEOUT.toMillis());
            assertThatThrownBy(() -> lock.tryLock(200, TimeUnit.MILLISECONDS))
                    .isInstanceOf(RelockConnectionException.class);

            CountDownLatch elected = new CountDownLatch(1);
            LeaderElection election = relock.getLeaderElection("early-leader");
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
            CompletableFuture<Long> locking = Threads.call(() -> {
                lock.lock();
                return Thread.currentThread().getId();
            });

            server.restart();

            long owner = locking.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(lock.isHeldByThread(owner)).isTrue();
            assertThat(elected.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("elected once connected").isTrue();
            Eventually.await(PROMPTLY, "connected", relock::isConnected);
            assertThat(clients.create().getLock("early").tryLock()).isFalse();
            assertThat(relock.getLockInfo("early").isLocked()).isTrue();
            assertThat(relock.clientInfo()).isNotNull();
            election.close();
        }
    }

    @Test
    void isConnectedFollowsTheServer() {
        Relock relock = clients.create();
        assertThat(relock.isConnected()).isTrue();
        server.kill();
        Eventually.await(PROMPTLY, "disconnected", () -> !relock.isConnected());
        server.restart();
        Eventually.await(PROMPTLY, "connected again", relock::isConnected);
    }

    @Test
    void withoutTheOptionCreateStillFailsFast() {
        server.kill();
        assertThatThrownBy(() -> Relock.create(RelockConfig.builder().singleServer(server.uri()).build()))
                .isInstanceOf(RelockConnectionException.class);
        assertThatThrownBy(() -> RelockConfig.builder().cluster("redis://127.0.0.1:7000").connectInBackground(true)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectInBackground");
    }
}
