package io.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.core.task.support.TaskExecutorAdapter;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/** Spring Integration's lock-based leader election, unchanged, on two Relock clients. */
class LeaderInitiatorTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private Relock first;
    private Relock second;
    /** Created by each test, stopped after it. */
    private LockRegistryLeaderInitiator firstInitiator;
    private LockRegistryLeaderInitiator secondInitiator;
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeEach
    void setUp(RedisServer server) {
        first = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        second = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        firstInitiator.stop();
        secondInitiator.stop();
        // The initiators' threads unlock as they end: let them, before the clients close.
        executor.shutdown();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        second.close();
        first.close();
    }

    @Test
    void oneOfTwoInitiatorsLeadsAndTheOtherTakesOverWhenItStops() throws InterruptedException {
        firstInitiator = initiator(new RelockLockRegistry(first, "app"), "first");
        secondInitiator = initiator(new RelockLockRegistry(second, "app"), "second");
        firstInitiator.start();
        secondInitiator.start();

        String leader = events.poll(30, TimeUnit.SECONDS);
        assertThat(leader).as("someone was elected").isIn("first granted", "second granted");
        LockRegistryLeaderInitiator leading = leader.startsWith("first") ? firstInitiator : secondInitiator;
        LockRegistryLeaderInitiator following = leading == firstInitiator ? secondInitiator : firstInitiator;
        String follower = leading == firstInitiator ? "second" : "first";
        assertThat(leading.getContext().isLeader()).isTrue();
        assertThat(following.getContext().isLeader()).isFalse();
        assertThat(events.poll(1, TimeUnit.SECONDS)).as("no second leader meanwhile").isNull();

        leading.stop();

        assertThat(List.of(events.poll(30, TimeUnit.SECONDS), events.poll(30, TimeUnit.SECONDS)))
                .as("the leader steps down and the other is elected")
                .containsExactlyInAnyOrder(leader.replace("granted", "revoked"), follower + " granted");
        assertThat(following.getContext().isLeader()).isTrue();
        assertThat(leading.getContext().isLeader()).isFalse();
    }

    @Test
    void withAFixedLeaseTheLeadersHeartbeatKeepsItsLease() throws InterruptedException {
        // RedisLockRegistry's usual set-up: a lease per hold, which the leader's heartbeat (a
        // re-entry and its release) restarts. Lease 3 s, heartbeat 100 ms.
        Duration lease = Duration.ofSeconds(3);
        firstInitiator = initiator(new RelockLockRegistry(first, "app", lease), "first");
        secondInitiator = initiator(new RelockLockRegistry(second, "app", lease), "second");
        firstInitiator.setHeartBeatMillis(100);
        secondInitiator.setHeartBeatMillis(100);
        firstInitiator.start();
        assertThat(events.poll(30, TimeUnit.SECONDS)).isEqualTo("first granted");
        secondInitiator.start();

        assertThat(events.poll(lease.multipliedBy(2).toMillis() + 1_000, TimeUnit.MILLISECONDS))
                .as("the leader keeps the lock for two leases and more").isNull();
        assertThat(firstInitiator.getContext().isLeader()).isTrue();
        assertThat(first.getLock("app:cluster-leader").remainTimeToLive()).isPositive();

        firstInitiator.stop();
        assertThat(List.of(events.poll(30, TimeUnit.SECONDS), events.poll(30, TimeUnit.SECONDS)))
                .containsExactlyInAnyOrder("first revoked", "second granted");
    }

    private LockRegistryLeaderInitiator initiator(RelockLockRegistry registry, String id) {
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
                new AbstractCandidate(id, "cluster-leader") {
                    @Override
                    public void onGranted(Context context) {
                        events.add(getId() + " granted");
                    }

                    @Override
                    public void onRevoked(Context context) {
                        events.add(getId() + " revoked");
                    }
                });
        // No Spring context: events go to nobody.
        initiator.setApplicationEventPublisher(event -> { });
        initiator.setTaskExecutor(new TaskExecutorAdapter(executor));
        return initiator;
    }
}
