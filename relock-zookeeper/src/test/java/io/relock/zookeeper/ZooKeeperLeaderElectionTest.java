package io.relock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.LeaderElection;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Leader election on ZooKeeper, on the same engine as on Redis: one leader at a time, terms that
 * grow, and a leader cut off from ZooKeeper that stops leading (isLeader() false, onRevoked)
 * before another candidate can be elected.
 */
class ZooKeeperLeaderElectionTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(20);

    private static TestingServer zookeeper;

    private final String root = "/elections/" + UUID.randomUUID();
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private Relock client(String connectString) {
        Relock relock = RelockZooKeeper.builder(connectString).root(root).sessionTimeout(Duration.ofSeconds(4))
                .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
                        .watchdogTimeout(Duration.ofSeconds(30)).commandTimeout(Duration.ofSeconds(2)).build())
                .build();
        open.add(relock);
        return relock;
    }

    /** What one candidate heard, with when. */
    private static final class Heard implements LeadershipListener {
        final LinkedBlockingQueue<Leadership> elected = new LinkedBlockingQueue<>();
        final LinkedBlockingQueue<Long> revokedAt = new LinkedBlockingQueue<>();
        volatile long electedAt;

        @Override
        public void onElected(Leadership leadership) {
            electedAt = System.nanoTime();
            elected.add(leadership);
        }

        @Override
        public void onRevoked(Leadership leadership) {
            revokedAt.add(System.nanoTime());
        }
    }

    private LeaderElection start(Relock client, Heard heard) {
        LeaderElection election = client.getLeaderElection("billing");
        open.add(election);
        election.start(heard);
        return election;
    }

    @Test
    void aLeaderCutOffStopsLeadingBeforeTheNextCandidateIsElected() throws Exception {
        FaultProxy proxy = FaultProxy.to("127.0.0.1", zookeeper.getPort());
        open.add(proxy);
        Heard first = new Heard();
        LeaderElection cutOff = start(client(proxy.host() + ":" + proxy.port()), first);
        Leadership firstTerm = first.elected.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(firstTerm).as("the first candidate elected").isNotNull();
        Heard second = new Heard();
        LeaderElection next = start(client(zookeeper.getConnectString()), second);
        assertThat(next.isLeader()).isFalse();

        proxy.blackhole();

        Long revokedAt = first.revokedAt.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(revokedAt).as("the cut-off leader's revocation").isNotNull();
        assertThat(cutOff.isLeader()).isFalse();
        Leadership secondTerm = second.elected.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(secondTerm).as("the next candidate elected").isNotNull();
        assertThat(revokedAt).as("revoked before the next was elected").isLessThan(second.electedAt);
        assertThat(secondTerm.term()).isGreaterThan(firstTerm.term());
        proxy.heal();
    }

    @Test
    void closingTheLeaderElectsTheNextAtOnceWithALargerTerm() throws Exception {
        Heard first = new Heard();
        LeaderElection leader = start(client(zookeeper.getConnectString()), first);
        Leadership firstTerm = first.elected.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(firstTerm).isNotNull();
        Heard second = new Heard();
        LeaderElection next = start(client(zookeeper.getConnectString()), second);
        Eventually.await(PROMPTLY, "the leader seen from the other client",
                () -> next.leader().isPresent());

        leader.close();

        Leadership secondTerm = second.elected.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(secondTerm).isNotNull();
        assertThat(secondTerm.term()).isGreaterThan(firstTerm.term());
        assertThat(next.isLeader()).isTrue();
        assertThat(leader.isLeader()).isFalse();
    }
}
