package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With replica sync on, a release is confirmed as an acquire is: {@code WAIT} after the release
 * script, on the connection that ran it. The history checked: nothing stays held that no client
 * believes it holds — not on the master, and not on a replica promoted while the release was
 * unconfirmed.
 */
class ReplicaSyncReleaseTest {

    private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(2);

    private RedisServer master;
    private RedisServer replica;
    private FaultProxy proxy;
    private Relock client;

    @BeforeEach
    void start() {
        master = RedisServer.builder().arg("repl-diskless-sync-delay", "0").start();
        replica = RedisServer.builder().replicaOf(master).start();
        Eventually.await(LockContractTest.PROMPTLY, "the replica in sync",
                () -> master.info("replication").contains("state=online")
                        && replica.info("replication").contains("master_link_status:up"));
        proxy = FaultProxy.to(master);
        client = Relock.create(RelockConfig.builder()
                .singleServer(proxy.uri())
                .commandTimeout(Clients.COMMAND_TIMEOUT)
                .replicaSync(1, SYNC_TIMEOUT)
                .build());
    }

    @AfterEach
    void stop() {
        client.close();
        proxy.close();
        replica.close();
        master.close();
    }

    @Test
    void aReleaseWhoseConfirmationIsCutIsRepeatedOnTheReplicaPromotedMeanwhile() {
        DistributedLock lock = client.getLock("promoted");
        lock.lock();
        assertThat(replica.command("EXISTS", "promoted")).as("the acquire was confirmed by the replica").isEqualTo(1L);
        // The replica is promoted with the hold (it will never see the release), and new
        // connections go to it: the failover lands between the release and its WAIT.
        replica.command("REPLICAOF", "NO", "ONE");
        proxy.retarget(replica.host(), replica.port());
        FaultProxy.Fault cut = proxy.cutAfterRequest("WAIT");

        lock.unlock();

        assertThat(cut.triggered()).isTrue();
        assertThat(master.command("EXISTS", "promoted")).as("released on the old master").isEqualTo(0L);
        assertThat(replica.command("EXISTS", "promoted"))
                .as("released again on the promoted replica, which had missed the first release")
                .isEqualTo(0L);
        assertThat(client.heldLocks()).isEmpty();
    }

    @Test
    void aReleaseFewerReplicasAcknowledgeStandsOnTheMasterAndUnlockReturns() {
        DistributedLock lock = client.getLock("lagging");
        lock.lock();
        long waitsBefore = waitCalls(master);
        replica.pause();
        try {
            lock.unlock();
        } finally {
            replica.resume();
        }

        assertThat(waitCalls(master)).as("the release was confirmed with WAIT").isEqualTo(waitsBefore + 1);
        assertThat(master.command("EXISTS", "lagging")).isEqualTo(0L);
        assertThat(client.heldLocks()).isEmpty();
        assertThat(lock.tryLock()).as("free for the next acquire").isTrue();
        lock.unlock();
    }

    @Test
    void aReentrantReleaseIsConfirmedToo() {
        DistributedLock lock = client.getLock("twice");
        lock.lock();
        lock.lock();
        long waitsBefore = waitCalls(master);

        lock.unlock();

        assertThat(waitCalls(master)).isEqualTo(waitsBefore + 1);
        assertThat(lock.getHoldCount()).isEqualTo(1);
        lock.unlock();
        assertThat(master.command("EXISTS", "twice")).isEqualTo(0L);
    }

    private static long waitCalls(RedisServer server) {
        Matcher calls = Pattern.compile("cmdstat_wait:calls=(\\d+)").matcher(server.info("commandstats"));
        return calls.find() ? Long.parseLong(calls.group(1)) : 0;
    }
}
