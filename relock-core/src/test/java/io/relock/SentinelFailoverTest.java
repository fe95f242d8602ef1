package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Failover through Sentinel (one master, two replicas, three sentinels), and replica sync:
 * clients follow the new master; a holder whose lock did not survive is told; an acquire that
 * no replica acknowledged is undone and reported.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SentinelFailoverTest {

    @RegisterExtension
    static final SharedTopology<SentinelTopology> sentinel = SharedTopology.sentinel();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    /**
     * From the master's death to the first acquisition on the new one; measured, see
     * docs/topologies-and-guarantees.md.
     */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(30);

    /** Long enough that the failover ends well within one lease: a loss is then found, not timed out. */
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

    @Test
    void clientsFollowTheNewMasterAndAHolderIsToldThatItsLockVanished() throws Exception {
        String name = "vanishing";
        Relock holder = clients.create(WATCHDOG);
        BlockingQueue<LockLostEvent> lost = new LinkedBlockingQueue<>();
        holder.addLockListener(lost::add);
        DistributedLock lock = holder.getLock(name);
        lock.lock();
        // The replicas lose the hold, as when the master dies before streaming it to them.
        for (RedisServer replica : topology.replicas()) {
            Eventually.await(PROMPTLY, "replica has the lock",
                    () -> Long.valueOf(1).equals(replica.command("EXISTS", name)));
            replica.command("CONFIG", "SET", "replica-read-only", "no");
            replica.command("DEL", name);
            replica.command("CONFIG", "SET", "replica-read-only", "yes");
        }
        Relock other = clients.create();
        RedisServer old = topology.master();
        long killedAt = System.nanoTime();
        old.kill();
        RedisServer promoted = topology.awaitMasterChange(old, FAILOVER_BOUND);
        DistributedLock contender = other.getLock(name);
        Eventually.await(FAILOVER_BOUND, "an acquisition on the new master", () -> {
            try {
                return contender.tryLock();
            } catch (RelockException e) {
                return false;
            }
        });
        System.out.printf("sentinel failover: new acquisitions resumed %d ms after the master was killed%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
        assertThat(promoted.command("EXISTS", name)).isEqualTo(1L);

        LockLostEvent event = lost.poll(WATCHDOG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event).as("the holder is told").isNotNull();
        assertThat(event.lockName()).isEqualTo(name);
        assertThat(event.cause()).as("found gone on the new master, not timed out").isNull();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name);
        assertThat(contender.isHeldByCurrentThread()).as("the new holder keeps it").isTrue();
        contender.unlock();
    }

    /**
     * Takes {@code lock}, waits until every replica has the hold (so the promoted one has it too)
     * and starts a waiter for the same name in {@code waiterClient}, subscribed when this returns.
     */
    private CompletableFuture<Boolean> holdReplicatedWithAWaiter(DistributedLock lock, Relock waiterClient) {
        lock.lock();
        long written = ClusterLockTest.replicationOffset(topology.master(), "master_repl_offset");
        Eventually.await(PROMPTLY, "the replicas have the hold", () -> topology.replicas().stream()
                .allMatch(replica -> ClusterLockTest.replicationOffset(replica, "slave_repl_offset") >= written));
        String name = lock.getName();
        CompletableFuture<Boolean> waiter = Threads.call(() -> waiterClient.getLock(name).tryLock(30, TimeUnit.SECONDS));
        Eventually.await(PROMPTLY, "a waiter subscribed", () -> waiterClient.getLockInfo(name).waitingClients() > 0);
        return waiter;
    }

    @Test
    void aWaiterRidesThroughAKilledMasterAndTheHolderUnlocksOnThePromotedOne() throws Exception {
        String name = "riding";
        DistributedLock lock = clients.create().getLock(name);
        RedisServer old = topology.master();
        Relock waiterClient = clients.create();
        CompletableFuture<Boolean> waiter = holdReplicatedWithAWaiter(lock, waiterClient);

        old.kill();
        RedisServer promoted = topology.awaitMasterChange(old, FAILOVER_BOUND);
        Eventually.await(FAILOVER_BOUND, "the holder's client reaches the promoted master", () -> {
            try {
                return lock.isHeldByCurrentThread();
            } catch (RelockException e) {
                return false;
            }
        });
        assertThat(waiter).as("the waiter is still waiting, not failed by the dead master").isNotDone();
        lock.unlock();

        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(promoted.command("EXISTS", name)).isEqualTo(1L);
        assertThat(waiterClient.getLockInfo(name).holders().keySet()).singleElement().asString()
                .startsWith(waiterClient.clientId());
    }

    /**
     * Last of the class: after a manual failover the topology settles only once every Sentinel
     * has seen the old master's new role, at its next ten-second INFO, which the next test's
     * {@code restore()} would wait out here. A later class sharing the topology waits for it
     * just the same.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void afterAManualFailoverAnUnlockLandsOnTheNewMasterAndAWaiterRidesThrough() throws Exception {
        String name = "switched";
        DistributedLock lock = clients.create().getLock(name);
        RedisServer old = topology.master();
        Relock waiterClient = clients.create();
        CompletableFuture<Boolean> waiter = holdReplicatedWithAWaiter(lock, waiterClient);

        // SENTINEL FAILOVER: the old master keeps running and accepting writes until a Sentinel
        // demotes it, seconds later. Clients follow +switch-master instead of waiting for that.
        RedisServer promoted = topology.failover();
        lock.unlock();

        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .as("the unlock freed the lock on the new master, where the waiter got it").isTrue();
        assertThat(topology.master()).isEqualTo(promoted).isNotEqualTo(old);
        assertThat(waiterClient.getLockInfo(name).holders().keySet()).singleElement().asString()
                .startsWith(waiterClient.clientId());
    }

    @Test
    void withReplicaSyncAnAcquireNoReplicaAcknowledgedIsUndoneAndReported() {
        Relock relock = Relock.create(RelockConfig.builder()
                .sentinel(topology.masterName(), topology.sentinelUris().toArray(String[]::new))
                .commandTimeout(Clients.COMMAND_TIMEOUT)
                .replicaSync(1, Duration.ofMillis(300))
                .build());
        try (relock) {
            DistributedLock lock = relock.getLock("synced");
            assertThat(lock.tryLock()).as("replicas up").isTrue();
            lock.unlock();

            topology.replicas().forEach(RedisServer::pause);
            assertThatThrownBy(lock::tryLock).isInstanceOfSatisfying(RelockReplicaSyncException.class, e -> {
                assertThat(e.acknowledged()).isZero();
                assertThat(e.required()).isEqualTo(1);
                assertThat(e).hasMessageContaining("synced").hasMessageContaining("0 of the required 1");
            });
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(topology.master().command("EXISTS", "synced")).as("nothing left held").isEqualTo(0L);

            topology.replicas().forEach(RedisServer::resume);
            assertThat(lock.tryLock()).as("replicas back").isTrue();
            lock.unlock();
        }
    }

    @Test
    void theMasterFoundThroughSentinelIsReachedWithTheConfiguredCredentials() {
        for (RedisServer node : topology.dataNodes()) {
            node.command("ACL", "SETUSER", "app", "on", ">app-secret", "~*", "&*", "+@all");
        }
        try {
            String[] sentinels = topology.sentinelUris().toArray(String[]::new);
            try (Relock relock = Relock.create(RelockConfig.builder().sentinel(topology.masterName(), sentinels)
                    .credentials("app", "app-secret".toCharArray()).build())) {
                DistributedLock lock = relock.getLock("with-credentials");
                assertThat(lock.tryLock()).isTrue();
                assertThat(topology.master().command("CLIENT", "LIST").toString().lines()
                        .filter(line -> line.contains("name=relock:" + relock.clientId())))
                        .isNotEmpty().allSatisfy(line -> assertThat(line).contains("user=app"));
                lock.unlock();
            }
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder().sentinel(topology.masterName(), sentinels)
                    .credentials("app", "not-it".toCharArray()).build()))
                    .isInstanceOf(RelockConnectionException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it"));
        } finally {
            // The topology is shared: the next class gets it without this user, as a fresh one.
            for (RedisServer node : topology.dataNodes()) {
                node.command("ACL", "DELUSER", "app");
            }
        }
    }
}
