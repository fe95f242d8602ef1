package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * RedLock over five real masters, two of them behind proxies that delay every byte: an unlock
 * returns once the three fast members released, a failed acquire returns without its slow
 * members, and the slow members' releases that follow in the background never take a hold that
 * was taken after them. Ordering is checked on the proxies' byte counters (the release had not
 * reached the slow servers when the unlock returned), not on durations.
 */
class RedLockSlowMembersTest {

    private static final int NODES = 5;
    private static final List<Integer> SLOW = List.of(3, 4);
    /** One way: a slow member's round trip is twice this. */
    private static final Duration LATENCY = Duration.ofMillis(250);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    private static final List<RedisServer> servers = new ArrayList<>();

    private final List<FaultProxy> proxies = new ArrayList<>();
    private final List<Relock> opened = new ArrayList<>();

    @BeforeAll
    static void startMasters() {
        for (int i = 0; i < NODES; i++) {
            servers.add(RedisServer.start());
        }
    }

    @AfterAll
    static void stopMasters() {
        servers.forEach(RedisServer::close);
        servers.clear();
    }

    @BeforeEach
    void startProxies() {
        for (RedisServer server : servers) {
            server.flushAll();
            proxies.add(FaultProxy.to(server));
        }
    }

    @AfterEach
    void closeEverything() {
        proxies.forEach(FaultProxy::heal); // a client closes faster without the delay
        opened.forEach(Relock::close);
        opened.clear();
        proxies.forEach(FaultProxy::close);
        proxies.clear();
    }

    /** A client per master, through the proxies, and the RedLock over their locks. */
    private final class Contender {

        final List<Relock> clients = new ArrayList<>();
        final DistributedLock redLock;

        Contender(String name) {
            List<DistributedLock> members = new ArrayList<>();
            for (FaultProxy proxy : proxies) {
                Relock relock = Relock.create(RelockConfig.builder().singleServer(proxy.uri())
                        .commandTimeout(COMMAND_TIMEOUT).watchdogTimeout(Clients.STEADY_WATCHDOG).build());
                opened.add(relock);
                clients.add(relock);
                members.add(relock.getLock(name));
            }
            redLock = clients.get(0).getRedLock(members.toArray(DistributedLock[]::new));
        }

        /** The hold count of {@code owner} on master {@code node}, read on the server itself. */
        long count(int node, String name, long owner) {
            Object count = servers.get(node).command("HGET", name, clients.get(node).clientId() + ":" + owner);
            return count == null ? 0 : Long.parseLong(count.toString());
        }

        void awaitCountEverywhere(String name, long owner, long expected) {
            for (int node = 0; node < NODES; node++) {
                int n = node;
                Eventually.await(PROMPTLY, "hold count " + expected + " on master " + node,
                        () -> count(n, name, owner) == expected);
            }
        }
    }

    /** How many scripts master {@code node} has run (EVALSHA and EVAL). */
    private static long scriptsRun(int node) {
        String stats = servers.get(node).info("commandstats");
        long calls = 0;
        for (String line : stats.split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String field = line.substring(line.indexOf("calls=") + "calls=".length());
                calls += Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return calls;
    }

    /** Waits until each slow master ran {@code more} scripts beyond {@code before} (same order as {@link #SLOW}). */
    private static void awaitScriptsOnSlowMasters(long[] before, int more) {
        for (int i = 0; i < SLOW.size(); i++) {
            int node = SLOW.get(i);
            long expected = before[i] + more;
            Eventually.await(PROMPTLY, more + " more scripts on master " + node, () -> scriptsRun(node) >= expected);
        }
    }

    private static long[] scriptsOnSlowMasters() {
        return SLOW.stream().mapToLong(RedLockSlowMembersTest::scriptsRun).toArray();
    }

    private void slowDown() {
        SLOW.forEach(node -> proxies.get(node).delay(LATENCY));
    }

    private long bytesToSlowServers() {
        return SLOW.stream().mapToLong(node -> proxies.get(node).bytesToServer()).sum();
    }

    @Test
    void unlockReturnsOnceAMajorityReleasedAndTheSlowMembersAreReleasedAfterwards() {
        Contender a = new Contender("slow-unlock");
        long owner = Thread.currentThread().getId();
        a.redLock.lock();
        a.awaitCountEverywhere("slow-unlock", owner, 1);
        slowDown();

        long before = bytesToSlowServers();
        a.redLock.unlock();

        // The release had not even reached the slow masters when unlock() returned.
        assertThat(bytesToSlowServers()).isEqualTo(before);
        for (int node : SLOW) {
            assertThat(a.count(node, "slow-unlock", owner)).as("master %s", node).isEqualTo(1);
        }
        a.awaitCountEverywhere("slow-unlock", owner, 0);
        for (RedisServer server : servers) {
            Eventually.await(PROMPTLY, "lock key gone on " + server, () -> server.command("EXISTS", "slow-unlock")
                    .equals(0L));
        }
    }

    @Test
    void theBackgroundReleaseNeverTakesTheHoldOfTheNextHolder() throws Exception {
        Contender a = new Contender("next-holder");
        Contender b = new Contender("next-holder");
        long owner = Thread.currentThread().getId();
        a.redLock.lock();
        a.awaitCountEverywhere("next-holder", owner, 1);
        slowDown();

        long before = bytesToSlowServers();
        a.redLock.unlock();
        assertThat(b.redLock.tryLock(PROMPTLY.toMillis(), -1, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(bytesToSlowServers()).as("A's releases still on their way").isEqualTo(before);

        a.awaitCountEverywhere("next-holder", owner, 0);
        for (int node = 0; node < NODES; node++) {
            if (!SLOW.contains(node)) {
                assertThat(b.count(node, "next-holder", owner)).as("B's hold on master %s", node).isEqualTo(1);
            }
        }
        assertThat(b.redLock.isHeldByCurrentThread()).isTrue();
        b.redLock.unlock();
    }

    @Test
    void theSameOwnerLockingAgainAtOnceKeepsItsNewHold() {
        Contender a = new Contender("again");
        long owner = Thread.currentThread().getId();
        a.redLock.lock();
        a.awaitCountEverywhere("again", owner, 1);
        slowDown();

        long before = bytesToSlowServers();
        long[] scripts = scriptsOnSlowMasters();
        a.redLock.unlock();
        a.redLock.lock();
        assertThat(bytesToSlowServers()).as("the first releases still on their way").isEqualTo(before);

        // On the slow masters the release lands first, then the new acquire: one hold everywhere.
        awaitScriptsOnSlowMasters(scripts, 2);
        a.awaitCountEverywhere("again", owner, 1);
        a.redLock.unlock();
        a.awaitCountEverywhere("again", owner, 0);
    }

    @Test
    void aReentrantHoldReleasedOnceAndTakenAgainCountsTwoEverywhere() {
        Contender a = new Contender("reentrant");
        long owner = Thread.currentThread().getId();
        a.redLock.lock();
        a.redLock.lock();
        a.awaitCountEverywhere("reentrant", owner, 2);
        slowDown();

        long[] scripts = scriptsOnSlowMasters();
        a.redLock.unlock();
        a.redLock.lock();

        awaitScriptsOnSlowMasters(scripts, 2);
        a.awaitCountEverywhere("reentrant", owner, 2);
        a.redLock.unlock();
        a.redLock.unlock();
        a.awaitCountEverywhere("reentrant", owner, 0);
    }

    @Test
    void slowMembersCatchUpWithAQuickSeriesOfLocksAndUnlocks() {
        Contender a = new Contender("series");
        long owner = Thread.currentThread().getId();
        a.redLock.lock();
        a.redLock.unlock();
        slowDown();

        for (int i = 0; i < 20; i++) {
            a.redLock.lock();
            a.redLock.unlock();
        }
        a.redLock.lock();
        a.awaitCountEverywhere("series", owner, 1);
        a.redLock.unlock();
        a.awaitCountEverywhere("series", owner, 0);
        for (RedisServer server : servers) {
            Eventually.await(PROMPTLY, "lock key gone on " + server, () -> server.command("EXISTS", "series")
                    .equals(0L));
        }
    }

    @Test
    void aFailedAcquireReturnsWithoutItsSlowMembersAndTheirHoldsAreRolledBack() throws Exception {
        Contender a = new Contender("rollback");
        // Another client holds masters 0, 1 (fast) and 4 (slow, answers "busy" after one round trip).
        Contender b = new Contender("rollback");
        long owner = Thread.currentThread().getId();
        for (int node : List.of(0, 1, 4)) {
            b.clients.get(node).getLock("rollback").lock();
        }
        // Master 3 answers much later than master 4: the attempt is lost on 4's "busy", and
        // master 3's "acquired" arrives after that, to be rolled back as well as master 2's.
        proxies.get(4).delay(Duration.ofMillis(50));
        proxies.get(3).delay(LATENCY);
        long before = proxies.get(3).bytesToClient();

        assertThat(a.redLock.tryLock()).isFalse();

        assertThat(proxies.get(3).bytesToClient()).as("master 3's answer still on its way").isEqualTo(before);
        for (int node : List.of(2, 3)) {
            int n = node;
            Eventually.await(PROMPTLY, "A's hold on master " + node + " taken and rolled back", () -> a.count(n,
                    "rollback", owner) == 0 && proxies.get(n).bytesToClient() > (n == 3 ? before : 0));
        }
        for (int node : List.of(0, 1, 4)) {
            assertThat(b.count(node, "rollback", owner)).as("B's hold on master %s", node).isEqualTo(1);
        }
        // Taken again at once by the same owner, after the rollback on every master.
        for (int node : List.of(0, 1, 4)) {
            b.clients.get(node).getLock("rollback").unlock();
        }
        assertThat(a.redLock.tryLock(PROMPTLY.toMillis(), -1, TimeUnit.MILLISECONDS)).isTrue();
        a.awaitCountEverywhere("rollback", owner, 1);
        a.redLock.unlock();
        a.awaitCountEverywhere("rollback", owner, 0);
    }
}
