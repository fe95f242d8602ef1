package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ClusterTopology;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Locks on a real Redis Cluster (three masters, a replica each): spread, contention, failover. */
class ClusterLockTest {

    @RegisterExtension
    static final SharedTopology<ClusterTopology> cluster = SharedTopology.cluster();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    /**
     * From a master's death to the first new acquisition on its slots; measured, see
     * docs/topologies-and-guarantees.md.
     */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(20);

    private ClusterTopology topology;
    private Backend backend;
    private Clients clients;

    @BeforeEach
    void connect() {
        this.topology = cluster.topology();
        this.backend = Backend.cluster(topology);
        this.clients = new Clients(backend);
    }

    @AfterEach
    void close() {
        clients.close();
    }

    @Test
    void aForceUnlockReachesTheHolderAsTheCauseAndUserDataIsNotRemoved() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        Relock operator = clients.create();
        CompletableFuture<LockLostEvent> lost = new CompletableFuture<>();
        holder.addLockListener(lost::complete);
        holder.getLock("seized:{7}").lock();
        RedisServer master = topology.masterFor("cache:{7}");
        master.command("SET", "cache:{7}", "{\"name\":\"ada\"}");
        master.command("HSET", "stats:{7}", "views", "10", "likes", "3");

        assertThat(operator.forceUnlock("seized:{7}")).isTrue();
        assertThat(operator.forceUnlock("cache:{7}")).isFalse();
        assertThat(operator.getLock("stats:{7}").forceUnlock()).isFalse();

        assertThat(lost.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS).cause())
                .isInstanceOf(LockForceUnlockedException.class);
        assertThat(master.command("GET", "cache:{7}")).isEqualTo("{\"name\":\"ada\"}");
        assertThat(master.command("HGETALL", "stats:{7}")).isEqualTo(List.of("views", "10", "likes", "3"));
    }

    @Test
    void aThousandLocksOverAllSlotsAreHeldRenewedSlotBySlotAndReleased() throws Exception {
        Relock relock = clients.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<WatchdogTickEvent> ticks = new LinkedBlockingQueue<>();
        relock.addObserver(new LockObserver() {
            @Override
            public void onWatchdogTick(WatchdogTickEvent tick) {
                ticks.add(tick);
            }
        });
        List<DistributedLock> locks = new ArrayList<>();
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String name = "spread:" + i;
            slots.add(ClusterTopology.slot(name));
            locks.add(relock.getLock(name));
        }
        assertThat(slots).as("distinct slots of 1000 names").hasSizeGreaterThan(950);
        locks.forEach(DistributedLock::lock);
        for (RedisServer master : topology.masters()) {
            assertThat((Long) master.command("DBSIZE")).as("locks on " + master).isGreaterThan(200L);
        }
        // A tick that began after the last acquire renews every lock, one script call per slot:
        // ticks report once done, and the next one begins after that.
        ticks.clear();
        assertThat(ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("a tick").isNotNull();
        WatchdogTickEvent tick = ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(tick).as("a tick begun after the last acquire").isNotNull();
        assertThat(tick.renewed()).as("renewed").isEqualTo(1000);
        assertThat(tick.failed() + tick.lost()).as("failed or lost").isZero();
        assertThat(locks).allSatisfy(lock -> assertThat(lock.isHeldByCurrentThread()).isTrue());
        assertThat(backend.dbSize()).isEqualTo(1000L);
        assertThat(locks).allSatisfy(lock -> assertThat(lock.remainTimeToLive()).isPositive());
        locks.forEach(DistributedLock::unlock);
        assertThat(backend.dbSize()).isZero();
    }

    @Test
    void fourClientsContendingOnLocksOfEveryMasterNeverOverlap() throws Exception {
        int names = 6;
        int perThread = 40;
        Map<String, AtomicBoolean> inside = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            Relock client = clients.create();
            for (int t = 0; t < 2; t++) {
                int offset = c + t;
                workers.add(Threads.run(() -> {
                    for (int i = 0; i < perThread; i++) {
                        String name = "contended:" + (i + offset) % names;
                        DistributedLock lock = client.getLock(name);
                        assertThat(lock.tryLock(30, TimeUnit.SECONDS)).isTrue();
                        try {
                            AtomicBoolean flag = inside.computeIfAbsent(name, n -> new AtomicBoolean());
                            if (!flag.compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                            entries.incrementAndGet();
                            Thread.yield();
                            flag.set(false);
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        Set<RedisServer> mastersUsed = new HashSet<>();
        for (int n = 0; n < names; n++) {
            mastersUsed.add(topology.masterFor("contended:" + n));
        }
        assertThat(mastersUsed).as("the names spread over masters").hasSizeGreaterThan(1);
        assertThat(overlaps.get()).isZero();
        assertThat(entries.get()).isEqualTo(8 * perThread);
        assertThat(backend.dbSize()).isZero();
    }

    /**
     * History: client A holds; A's second thread waits behind it and B waits on another client;
     * the master of the lock's slot is killed and its replica promoted. A's unlock, retried on the
     * promoted master, hands the lock on (to A's second thread when it is parked then, in one
     * script; else through Redis), and each of the two waiters gets it exactly once, never
     * together; at the end nothing is held.
     */
    @Test
    void whenAMasterDiesItsReplicaTakesOverAndHoldersWaitersAndNewcomersCarryOn() throws Exception {
        String name = "failing-over";
        Relock holderClient = clients.create();
        DistributedLock held = holderClient.getLock(name);
        held.lock();
        RedisServer master = topology.masterFor(name);
        // The replica has the hold before the master dies (the loss case is the Guarantees' topic).
        long written = replicationOffset(master, "master_repl_offset");
        Eventually.await(PROMPTLY, "the replica has the lock", () -> topology.replicasOf(master).stream()
                .allMatch(replica -> replicationOffset(replica, "slave_repl_offset") >= written));
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        CompletableFuture<Boolean> sibling = Threads.call(() -> {
            DistributedLock lock = holderClient.getLock(name);
            lock.lock();
            try {
                return inside.compareAndSet(false, true);
            } finally {
                inside.set(false);
                lock.unlock();
            }
        });
        Eventually.await(PROMPTLY, "the sibling thread waits", () -> holderClient.getLockInfo(name).waitingClients() > 0);
        Relock waiterClient = clients.create();
        CompletableFuture<Boolean> waiter = Threads.call(() -> {
            DistributedLock lock = waiterClient.getLock(name);
            if (!lock.tryLock(60, TimeUnit.SECONDS)) {
                return false;
            }
            try {
                if (!inside.compareAndSet(false, true)) {
                    overlaps.incrementAndGet();
                }
                return true;
            } finally {
                inside.set(false);
                lock.unlock();
            }
        });
        Eventually.await(PROMPTLY, "a waiter subscribed", () -> waiterClient.getLockInfo(name).waitingClients() > 1);

        long killedAt = System.nanoTime();
        master.kill();
        // No help from the test: the cluster notices (node timeout 1 s) and promotes the replica.
        DistributedLock newcomer = clients.create().getLock("{" + name + "}:other");
        long[] promotedAt = {0};
        Eventually.await(FAILOVER_BOUND, "a new acquisition on the promoted master", () -> {
            if (promotedAt[0] == 0 && !topology.masterFor(name).equals(master)) {
                promotedAt[0] = System.nanoTime();
            }
            return answeredTrue(newcomer::tryLock);
        });
        long resumedAt = System.nanoTime();
        System.out.printf("cluster failover: replica promoted %d ms and new acquisitions resumed %d ms after the "
                + "master was killed%n", TimeUnit.NANOSECONDS.toMillis((promotedAt[0] == 0 ? resumedAt
                        : promotedAt[0]) - killedAt), TimeUnit.NANOSECONDS.toMillis(resumedAt - killedAt));
        newcomer.unlock();
        assertThat(topology.masterFor(name)).as("the replica took over").isNotEqualTo(master);

        // The waiters ride through the failover: their attempts that met the dead master are
        // retried on the promoted one, within their wait.
        assertThat(waiter).as("the waiter still waits, the hold survived the failover").isNotDone();
        assertThat(sibling).as("so does the sibling").isNotDone();
        // Right after the promotion, the holder's client may still route to the dead master:
        // its unlock is retried on the promoted master within the command timeout.
        held.unlock();
        assertThat(sibling.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the sibling held it alone").isTrue();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter got it after unlock")
                .isTrue();
        assertThat(overlaps).hasValue(0);
        assertThat(waiterClient.getLockInfo(name).holders()).isEmpty();
    }

    @Test
    void everyLockTypeExcludesAndWakesItsWaitersOnTheCluster() throws Exception {
        Relock mine = clients.create();
        Relock theirs = clients.create();
        Map<String, BiFunction<Relock, String, DistributedLock>> types = new LinkedHashMap<>();
        types.put("fair", Relock::getFairLock);
        types.put("fenced", Relock::getFencedLock);
        types.put("simple", Relock::getSimpleLock);
        types.put("spin", Relock::getSpinLock);
        types.put("write", (client, name) -> client.getReadWriteLock(name).writeLock());
        types.put("read-blocks-write", (client, name) -> client.getReadWriteLock(name).readLock());
        types.put("multi", (client, name) -> client.getMultiLock(client.getLock(name + ":a"),
                client.getLock(name + ":b"), client.getLock(name + ":c")));
        for (Map.Entry<String, BiFunction<Relock, String, DistributedLock>> type : types.entrySet()) {
            String name = "type:" + type.getKey();
            DistributedLock held = type.getValue().apply(mine, name);
            held.lock();
            DistributedLock other = type.getKey().equals("read-blocks-write")
                    ? theirs.getReadWriteLock(name).writeLock() : type.getValue().apply(theirs, name);
            assertThat(other.tryLock()).as(type.getKey() + " excludes").isFalse();
            CompletableFuture<Boolean> waiter = Threads.call(() -> {
                boolean acquired = other.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    other.unlock();
                }
                return acquired;
            });
            held.unlock();
            assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as(type.getKey() + " wakes").isTrue();
        }
        assertThat(backend.dbSize()).as("only fenced tokens stay").isEqualTo(1L);
    }

    @Test
    void scriptsMissingOnANodeAreSentAgain() {
        // As on a node that restarted or joined after the client started.
        topology.nodes().forEach(node -> node.command("SCRIPT", "FLUSH"));
        DistributedLock lock = clients.create().getLock("flushed");
        lock.lock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(backend.dbSize()).isZero();
    }

    /** Whether {@code call} answered true; Redis trouble (a client still on the dead master) is "not yet". */
    @Test
    void aNameWithBracesButNoHashTagIsRejectedBecauseItsKeysWouldSpanSlots() {
        Relock relock = clients.create();
        for (String name : List.of("a}b", "a{b", "{}c")) {
            assertThatThrownBy(() -> relock.getLock(name)).as(name).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("hash tag");
        }
        DistributedLock tagged = relock.getFairLock("{order}:7");
        tagged.lock();
        tagged.unlock();
    }

    private static boolean answeredTrue(BooleanSupplier call) {
        try {
            return call.getAsBoolean();
        } catch (RelockException e) {
            return false;
        }
    }

    /** A replication offset from INFO: the master's {@code master_repl_offset}, a replica's {@code slave_repl_offset}. */
    static long replicationOffset(RedisServer server, String field) {
        return server.info("replication").lines().filter(line -> line.startsWith(field + ":")).findFirst()
                .map(line -> Long.parseLong(line.substring(field.length() + 1).trim()))
                .orElseThrow(() -> new AssertionError("no " + field + " in INFO of " + server));
    }
}
