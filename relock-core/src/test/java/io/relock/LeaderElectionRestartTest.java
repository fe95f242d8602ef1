package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link LeaderElection} across a Redis restart, durable (AOF) and with the data lost. */
class LeaderElectionRestartTest {

    static final Duration PROMPTLY = Duration.ofSeconds(15);

    /**
     * History checked: a sampler reads every candidate's {@code currentLeadership()} in rounds
     * from before the restart until leadership is back; two candidates leading in one round is
     * a violation when the one read first still leads after the second was seen (a real
     * overlap), and a term must belong to one candidate only. Then exactly one leads, and a
     * bystander's {@code leader()} names it with its term.
     */
    @Test
    void aDurableRedisRestartLeavesAtMostOneLeaderByTermAndLeadershipIsRegained() throws Exception {
        try (RedisServer server = RedisServer.builder().arg("appendonly", "yes").arg("appendfsync", "always").start();
                Clients clients = new Clients(server)) {
            List<LeaderElection> candidates = candidates(clients, 3);
            Eventually.await(PROMPTLY, "one leader", () -> leaders(candidates) == 1);
            Sampler sampler = new Sampler(candidates);
            CompletableFuture<Void> sampling = CompletableFuture.runAsync(sampler);
            try {
                server.restart();
                Eventually.await(PROMPTLY, "one leader after the restart", () -> leaders(candidates) == 1);
            } finally {
                sampler.stop.set(true);
                sampling.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            }
            assertThat(sampler.overlaps).isEmpty();
            assertThat(sampler.rounds).isGreaterThan(0);
            System.out.println("LeaderElectionRestartTest: durable restart, terms seen " + sampler.termOwner);
            assertLeaderSeenByBystander(clients, candidates);
            candidates.forEach(LeaderElection::close);
        }
    }

    /**
     * A restart that loses the data loses the lock and the token key: the leader is revoked
     * when its renewal finds the lock gone, and exactly one candidate leads again (terms start
     * over, as docs/leader-election-and-jobs.md says). Checks the regained leader and that every
     * revoked term was first elected.
     */
    @Test
    void aRedisRestartThatLosesTheDataRevokesTheLeaderAndLeadershipIsRegained() throws Exception {
        try (RedisServer server = RedisServer.start(); Clients clients = new Clients(server)) {
            List<LeaderElection> candidates = candidates(clients, 3);
            Eventually.await(PROMPTLY, "one leader", () -> leaders(candidates) == 1);
            LeaderElection before = candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
            long beforeTerm = before.currentLeadership().orElseThrow().term();
            server.restart();
            Eventually.await(PROMPTLY, "the old term ended", () -> before.currentLeadership()
                    .map(l -> l.term() != beforeTerm).orElse(true));
            Eventually.await(PROMPTLY, "one leader after the restart", () -> leaders(candidates) == 1);
            assertLeaderSeenByBystander(clients, candidates);
            candidates.forEach(LeaderElection::close);
        }
    }

    private static List<LeaderElection> candidates(Clients clients, int count) {
        List<LeaderElection> candidates = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            LeaderElection election = clients.create(Clients.SHORT_WATCHDOG).getLeaderElection("restart");
            election.start(new LeaderElectionTest.Recorder());
            candidates.add(election);
        }
        return candidates;
    }

    private static void assertLeaderSeenByBystander(Clients clients, List<LeaderElection> candidates) {
        LeaderElection leader = candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
        Leadership leadership = leader.currentLeadership().orElseThrow();
        LeaderElection bystander = clients.create().getLeaderElection("restart");
        Eventually.await(PROMPTLY, "the bystander sees the leader", () -> bystander.leader()
                .map(info -> info.term() == leadership.term()).orElse(false));
        assertThat(bystander.leader().orElseThrow().clientId()).isEqualTo(leadership.leader().clientId());
    }

    private static long leaders(List<LeaderElection> candidates) {
        return candidates.stream().filter(LeaderElection::isLeader).count();
    }

    /** Reads every candidate's leadership in rounds until stopped. */
    static final class Sampler implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final List<String> overlaps = new java.util.concurrent.CopyOnWriteArrayList<>();
        final Map<Long, Integer> termOwner = new ConcurrentHashMap<>();
        volatile long rounds;
        private final List<LeaderElection> candidates;

        Sampler(List<LeaderElection> candidates) {
            this.candidates = candidates;
        }

        @Override
        public void run() {
            while (!stop.get()) {
                int first = -1;
                for (int i = 0; i < candidates.size(); i++) {
                    Optional<Leadership> leadership = candidates.get(i).currentLeadership();
                    if (leadership.isEmpty()) {
                        continue;
                    }
                    Integer owner = termOwner.putIfAbsent(leadership.get().term(), i);
                    if (owner != null && owner != i) {
                        overlaps.add("term " + leadership.get().term() + " led by " + owner + " and " + i);
                    }
                    if (first < 0) {
                        first = i;
                    } else if (candidates.get(first).isLeader()) {
                        overlaps.add("candidates " + first + " and " + i + " lead at once");
                    }
                }
                rounds++;
            }
        }
    }
}
