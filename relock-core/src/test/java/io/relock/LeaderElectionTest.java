package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link LeaderElection} on a real Redis: one leader, hand-over, crashes, pauses, restarts. */
class LeaderElectionTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    static final Duration PROMPTLY = Duration.ofSeconds(10);
    static final long LEASE = Clients.SHORT_WATCHDOG.toMillis();

    private RedisServer server;
    private Clients clients;
    private final List<LeaderElection> elections = new ArrayList<>();

    @BeforeEach
    void startClients(RedisServer server) {
        this.server = server;
        server.flushAll();
        this.clients = new Clients(server);
    }

    @AfterEach
    void closeClients() {
        elections.forEach(LeaderElection::close);
        clients.close();
    }

    @Test
    void misuseIsRefusedNamingTheArgument() {
        Relock relock = clients.create();
        assertThatThrownBy(() -> relock.getLeaderElection(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> relock.getLeaderElection("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        LeaderElection election = elect(relock, "misuse");
        assertThatThrownBy(() -> election.start(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("listener");
        election.start(new Recorder());
        assertThatThrownBy(() -> election.start(new Recorder())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("started");
        election.close();
        election.close();
        assertThatThrownBy(() -> election.start(new Recorder())).isInstanceOf(IllegalStateException.class);
        LeaderElection unstarted = elect(relock, "misuse");
        unstarted.close();
        assertThat(unstarted.isLeader()).isFalse();
        assertThat(unstarted.currentLeadership()).isEmpty();
    }

    @Test
    void exactlyOneOfThreeClientsLeadsAndAnyClientCanSeeWho() {
        List<Recorder> recorders = new ArrayList<>();
        List<LeaderElection> candidates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Recorder recorder = new Recorder();
            LeaderElection election = elect(clients.create(Clients.SHORT_WATCHDOG), "billing");
            election.start(recorder);
            recorders.add(recorder);
            candidates.add(election);
        }
        Eventually.await(PROMPTLY, "one leader", () -> leaders(candidates) == 1);
        // History checked: over three leases (nine watchdog ticks) there is never more than one
        // leader, it stays the same one, and no listener heard of a second election.
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * LEASE);
        LeaderElection leader = candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
        while (System.nanoTime() < end) {
            assertThat(leaders(candidates)).isLessThanOrEqualTo(1);
            assertThat(leader.isLeader()).isTrue();
        }
        assertThat(recorders.stream().mapToInt(r -> r.elected.size()).sum()).isEqualTo(1);
        Leadership leadership = leader.currentLeadership().orElseThrow();
        Relock bystander = clients.create();
        LeaderInfo seen = bystander.getLeaderElection("billing").leader().orElseThrow();
        assertThat(seen.term()).isEqualTo(leadership.term());
        assertThat(seen.client()).contains(leadership.leader());
        assertThat(leadership.leader().pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(bystander.getLeaderElection("nobody").leader()).isEmpty();
    }

    @Test
    void closeHandsOverAtOnceWithoutWaitingForTheLease() throws Exception {
        // A steady 30 s lease: a hand-over within a second cannot be the lease running out.
        Recorder first = new Recorder();
        LeaderElection leader = elect(clients.create(), "handover");
        leader.start(first);
        long firstTerm = first.nextElected().term();
        Recorder second = new Recorder();
        elect(clients.create(), "handover").start(second);
        Eventually.await(PROMPTLY, "the second candidate waits", () -> server.command("PUBSUB", "NUMSUB",
                "redisson_lock__channel:{handover}").toString().endsWith("1]"));
        long closing = System.nanoTime();
        leader.close();
        Leadership next = second.nextElected();
        long handOverMillis = TimeUnit.NANOSECONDS.toMillis(second.lastElectedAt - closing);
        System.out.println("LeaderElectionTest: close() handed over in " + handOverMillis + " ms (lease "
                + Clients.STEADY_WATCHDOG.toMillis() + " ms)");
        assertThat(handOverMillis).isLessThan(1000);
        assertThat(next.term()).isGreaterThan(firstTerm);
        assertThat(first.revoked).extracting(Leadership::term).containsExactly(firstTerm);
        assertThat(leader.isLeader()).isFalse();
    }

    @Test
    void aListenerThatThrowsDoesNotBreakTheElection() throws Exception {
        Recorder throwing = new Recorder().throwing();
        LeaderElection first = elect(clients.create(), "throws");
        first.start(throwing);
        long term = throwing.nextElected().term();
        assertThat(first.isLeader()).isTrue();
        Recorder other = new Recorder().throwing();
        LeaderElection second = elect(clients.create(), "throws");
        second.start(other);
        first.close();
        assertThat(other.nextElected().term()).isGreaterThan(term);
        assertThat(throwing.revoked).hasSize(1);
        assertThat(second.isLeader()).isTrue();
        // The throwing listener's election still runs: it is elected again once the other yields.
        Recorder again = new Recorder().throwing();
        LeaderElection third = elect(clients.create(), "throws");
        third.start(again);
        second.close();
        assertThat(again.nextElected().term()).isGreaterThan(term + 1);
        assertThat(third.isLeader()).isTrue();
    }

    /**
     * History checked: the child is elected in term t; after SIGKILL exactly one of the two
     * candidates here is elected, within the lease (plus 500 ms of scheduling slack), in a term
     * above t.
     */
    @Test
    void aKilledLeaderIsReplacedWithinTheLease() throws Exception {
        try (ChildJvm child = ChildJvm.start(LeaderMain.class, server.uri(), "killed", Long.toString(LEASE))) {
            long childTerm = Long.parseLong(child.awaitLine("ELECTED", LockContractTest.CHILD_START).split(" ")[1]);
            // One recorder for both candidates: whichever is elected, it hears of it (only one is).
            Recorder recorder = new Recorder();
            elect(clients.create(Clients.SHORT_WATCHDOG), "killed").start(recorder);
            elect(clients.create(Clients.SHORT_WATCHDOG), "killed").start(recorder);
            long killed = System.nanoTime();
            child.kill();
            Leadership next = recorder.nextElected();
            long millis = TimeUnit.NANOSECONDS.toMillis(recorder.lastElectedAt - killed);
            System.out.println("LeaderElectionTest: SIGKILLed leader replaced after " + millis + " ms (lease "
                    + LEASE + " ms)");
            assertThat(millis).isLessThanOrEqualTo(LEASE + 500);
            assertThat(next.term()).isGreaterThan(childTerm);
            assertThat(recorder.elected).hasSize(1);
        }
    }

    @Test
    void aLeaderPausedPastItsLeaseIsReplacedAndLearnsItBeforeActingAgain() throws Exception {
        // History checked, from the paused child's own output: ELECTED t, then after SIGSTOP and
        // SIGCONT its job's first isLeader() is false (no STALE line), REVOKED t follows, the
        // new leader's term is above t, and the child is not told it leads again meanwhile.
        try (ChildJvm child = ChildJvm.start(LeaderMain.class, server.uri(), "paused", Long.toString(LEASE))) {
            long childTerm = Long.parseLong(child.awaitLine("ELECTED", LockContractTest.CHILD_START).split(" ")[1]);
            child.awaitLine("LEADER true", PROMPTLY);
            Recorder recorder = new Recorder();
            LeaderElection candidate = elect(clients.create(Clients.SHORT_WATCHDOG), "paused");
            candidate.start(recorder);
            long paused = System.nanoTime();
            child.pause();
            Leadership next;
            try {
                next = recorder.nextElected();
                System.out.println("LeaderElectionTest: SIGSTOPped leader replaced after "
                        + TimeUnit.NANOSECONDS.toMillis(recorder.lastElectedAt - paused) + " ms (lease " + LEASE
                        + " ms)");
                assertThat(next.term()).isGreaterThan(childTerm);
                // Paused for more than a whole lease by the clock, so the child's job sees the gap.
                Eventually.await(PROMPTLY, "the child paused for more than its lease",
                        () -> System.nanoTime() - paused > TimeUnit.MILLISECONDS.toNanos(LEASE + 100));
            } finally {
                child.resume();
            }
            long woke = Long.parseLong(child.awaitLine("WOKE", PROMPTLY).split(" ")[2]);
            String revoked = child.awaitLine("REVOKED", PROMPTLY);
            assertThat(Long.parseLong(revoked.split(" ")[1])).isEqualTo(childTerm);
            long revokedAt = Long.parseLong(revoked.split(" ")[2]);
            child.awaitLine("LEADER false", PROMPTLY);
            System.out.println("LeaderElectionTest: the resumed leader's onRevoked came "
                    + TimeUnit.NANOSECONDS.toMillis(revokedAt - woke) + " ms after its job woke; its isLeader() was"
                    + " false from the first call");
            assertThat(child.output()).doesNotContain("STALE");
            assertThat(child.output().lines().filter(l -> l.startsWith("ELECTED"))).hasSize(1);
            assertThat(candidate.isLeader()).isTrue();
            assertThat(candidate.currentLeadership().orElseThrow().term()).isEqualTo(next.term());
        }
    }

    private LeaderElection elect(Relock relock, String name) {
        LeaderElection election = relock.getLeaderElection(name);
        elections.add(election);
        return election;
    }

    private static long leaders(List<LeaderElection> candidates) {
        return candidates.stream().filter(LeaderElection::isLeader).count();
    }

    /** Records one election's events in order; optionally throws from each. */
    static final class Recorder implements LeadershipListener {
        final List<Leadership> elected = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<Leadership> revoked = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final java.util.concurrent.BlockingQueue<Leadership> electedQueue =
                new java.util.concurrent.LinkedBlockingQueue<>();
        volatile long lastElectedAt;
        private boolean throwing;
        private volatile Thread inCall;

        Recorder throwing() {
            this.throwing = true;
            return this;
        }

        @Override
        public void onElected(Leadership leadership) {
            enter();
            lastElectedAt = System.nanoTime();
            elected.add(leadership);
            electedQueue.add(leadership);
            leave();
        }

        @Override
        public void onRevoked(Leadership leadership) {
            enter();
            assertThat(elected).isNotEmpty();
            assertThat(elected.get(elected.size() - 1)).isEqualTo(leadership);
            revoked.add(leadership);
            leave();
        }

        private void enter() {
            if (inCall != null) {
                throw new AssertionError("listener called concurrently");
            }
            inCall = Thread.currentThread();
        }

        private void leave() {
            inCall = null;
            if (throwing) {
                throw new IllegalStateException("listener fails on purpose");
            }
        }

        Leadership nextElected() throws InterruptedException {
            Leadership leadership = electedQueue.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(leadership).as("elected within " + PROMPTLY).isNotNull();
            return leadership;
        }
    }
}
