package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link LeaderElection} across a Sentinel failover (one master, two replicas, three sentinels). */
class LeaderElectionSentinelTest {

    @RegisterExtension
    static final SharedTopology<SentinelTopology> sentinel = SharedTopology.sentinel();

    private static final Duration BOUND = Duration.ofSeconds(30);
    /** Long enough that the failover ends within one lease, as in {@code SentinelFailoverTest}. */
    private static final Duration WATCHDOG = Duration.ofSeconds(15);

    private SentinelTopology topology;
    private Clients clients;

    @BeforeEach
    void connect() {
        this.topology = sentinel.topology();
        this.clients = new Clients(Backend.sentinel(topology));
    }

    @AfterEach
    void close() {
        clients.close();
    }

    /**
     * History checked, as in {@link LeaderElectionRestartTest}: from before the failover until a
     * leader is back, no two candidates lead at once and no term has two leaders; then exactly
     * one leads and a bystander's {@code leader()} names it with its term.
     */
    @Test
    void aFailoverLeavesAtMostOneLeaderByTermAndLeadershipIsRegained() throws Exception {
        List<LeaderElection> candidates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LeaderElection election = clients.create(WATCHDOG).getLeaderElection("failover");
            election.start(new LeaderElectionTest.Recorder());
            candidates.add(election);
        }
        Eventually.await(BOUND, "one leader", () -> leaders(candidates) == 1);
        for (RedisServer replica : topology.replicas()) {
            Eventually.await(BOUND, "replica has the election's lock",
                    () -> Long.valueOf(1).equals(replica.command("EXISTS", "failover")));
        }
        LeaderElectionRestartTest.Sampler sampler = new LeaderElectionRestartTest.Sampler(candidates);
        CompletableFuture<Void> sampling = CompletableFuture.runAsync(sampler);
        try {
            topology.failover();
            // The renewals reach the promoted master: leadership survives or passes on, once.
            Eventually.await(BOUND, "one leader after the failover", () -> leaders(candidates) == 1);
        } finally {
            sampler.stop.set(true);
            sampling.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(sampler.overlaps).isEmpty();
        System.out.println("LeaderElectionSentinelTest: failover, terms seen " + sampler.termOwner);
        Leadership leadership = candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow()
                .currentLeadership().orElseThrow();
        LeaderElection bystander = clients.create().getLeaderElection("failover");
        Eventually.await(BOUND, "the bystander sees the leader", () -> bystander.leader()
                .map(info -> info.term() == leadership.term()).orElse(false));
        candidates.forEach(LeaderElection::close);
    }

    private static long leaders(List<LeaderElection> candidates) {
        return candidates.stream().filter(LeaderElection::isLeader).count();
    }
}
