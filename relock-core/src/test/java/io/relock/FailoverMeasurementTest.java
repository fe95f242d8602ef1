package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelExtension;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Measures what failovers do to mutual exclusion, and asserts only what Relock guarantees.
 * {@code relock-bench}'s {@code FailoverRun} runs the same measurement for longer.
 *
 * <p>Four clients (two threads each) loop {@code tryLock} → a 1 ms busy critical section →
 * {@code unlock} over four lock names, while the master is failed over three times: killed
 * (SIGKILL), failed over by Sentinel with the old master still running, killed again. Mutual
 * exclusion is checked without trusting the lock: each critical section counts itself in and out
 * of an in-JVM counter per name, and entering an occupied one is a two-holder incident.
 *
 * <p>Sentinel's own failover ({@code SENTINEL FAILOVER}) leaves the old master running and still a
 * master, and Relock's clients stay connected to it until it is demoted. To show what that split
 * does, two of the four clients have their connections to the deposed master closed (as a
 * network blip or a restart would): they reconnect through Sentinel to the new master while the
 * other two keep locking on the old one. The split ends as Sentinel ends it, only sooner: every
 * Relock connection to the old master is closed and the topology is {@linkplain
 * SentinelTopology#restore() restored}.
 *
 * <p>Besides the workers, a probe client takes one lock (fixed 60 s lease, so nothing expires)
 * before each failover and looks for it on the promoted master right after, on the server
 * itself. After a Sentinel failover it also takes one on the deposed master; with replica sync
 * on, its connection is closed while its {@code WAIT} blocks there (the deposed master has no
 * replica left). A probe that {@code tryLock} acknowledged but the promoted master does not have
 * is acknowledged-then-lost.
 *
 * <p>Two things the testkit's {@code restore()} does differently from Sentinel are evened out:
 * it demotes a running former master with {@code REPLICAOF} without closing its clients'
 * connections (Sentinel closes them), so Relock connections left on replicas are closed after it;
 * and Sentinel notices that demotion only at its next poll of the node, so each failover first
 * waits until every Sentinel sees every replica as a replica (polling is set to every second).
 *
 * <p>Each mode prints one report line (and one per failover). Asserted in every mode: clients
 * follow every failover (every client and every lock name get critical sections after each),
 * every worker stops within a bound (no waiter hangs), and every failure is one the contract
 * names ({@link RelockException}, or {@link IllegalMonitorStateException} from {@code unlock}).
 * Two-holder incidents are reported, never asserted: without replica sync they are the expected
 * cost of a failover, and with it they are unlikely but not excluded (a lease can still run out
 * under a holder that the machine stalls).
 *
 * <p>The one loss guarantee: with {@code replicaSync(2, …)}, an acknowledged acquire is on both
 * replicas, so whichever one Sentinel promotes has it — after a kill, and after a Sentinel
 * failover, where the deposed master has no replica left that could acknowledge a new acquire
 * and the new master only one. With {@code replicaSync(1, …)} that does not hold: the one replica
 * that acknowledged need not be the one promoted (Sentinel picks by the replication offsets it
 * last polled), so that mode is only reported.
 */
class FailoverMeasurementTest {

    @RegisterExtension
    static final SentinelExtension sentinel = SentinelExtension.perClass();

    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 2;
    private static final int LOCKS = 4;
    /** Clients whose connections to a deposed master are closed first; they lock on the new master meanwhile. */
    private static final IntPredicate DETACHED_FIRST = client -> client >= CLIENTS / 2;
    private static final IntPredicate EVERY_CLIENT = client -> true;
    private static final List<Fault> FAULTS = List.of(Fault.KILL, Fault.SENTINEL_FAILOVER, Fault.KILL);

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration REPLICA_SYNC_TIMEOUT = Duration.ofMillis(500);
    private static final long WAIT_MILLIS = 2000;
    /** The lease of the second thread of each client; the first relies on the watchdog. */
    private static final long LEASE_MILLIS = 2000;
    private static final long CRITICAL_SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long PROBE_LEASE_MILLIS = 60_000;
    /** The probe client's owner id (it uses the async API, so no thread owns its holds). */
    private static final long PROBE_OWNER = 1;
    /** An attempt, a WAIT, an undo: what a probe's acquire or release may take, with slack. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);
    /** Critical sections each client must complete after a failover for it to count as followed. */
    private static final int PROGRESS = 3;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(20);
    /** The split lasts until each client on the new master completed this many critical sections... */
    private static final int SPLIT_PROGRESS = 25;
    /** ...or this long, whichever is first (with replica sync, nobody may get any). */
    private static final Duration SPLIT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration TOPOLOGY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration SENTINEL_INFO_PERIOD = Duration.ofSeconds(1);
    /** A worker's slowest turn: a wait, an attempt, a WAIT, an undo and an unlock, with slack. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withoutReplicaSyncClientsFollowEveryFailover(SentinelTopology topology) throws Exception {
        try (Measurement run = new Measurement(topology, "replicaSync off", 0)) {
            run.execute();
            run.assertContractKept();
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withReplicaSyncToOneReplicaClientsFollowEveryFailover(SentinelTopology topology) throws Exception {
        try (Measurement run = new Measurement(topology, "replicaSync(1, 500ms)", 1)) {
            run.execute();
            run.assertContractKept();
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withReplicaSyncToEveryReplicaNoAcknowledgedHoldIsLost(SentinelTopology topology) throws Exception {
        assertThat(topology.replicas()).as("replicaSync(2) must cover every replica").hasSize(2);
        try (Measurement run = new Measurement(topology, "replicaSync(2, 500ms)", 2)) {
            run.execute();
            run.assertContractKept();
            assertThat(run.probesAcknowledged).as("probe holds acknowledged by both replicas").isPositive();
            assertThat(run.probesLost)
                    .as("probe holds acknowledged by both replicas but missing on the promoted master").isEmpty();
        }
    }

    private enum Fault {
        KILL("kill"), SENTINEL_FAILOVER("sentinel failover");

        private final String label;

        Fault(String label) {
            this.label = label;
        }
    }

    /**
     * A stretch of the run — before the first failover, during one, during a split, after one —
     * with its own progress latches and counts, so the report can say where things happened.
     */
    private static final class Phase {

        final String label;
        final LongAdder acquisitions = new LongAdder();
        final LongAdder incidents = new LongAdder();
        final CountDownLatch[] perClient = new CountDownLatch[CLIENTS];
        final CountDownLatch[] perLock = new CountDownLatch[LOCKS];
        final AtomicReferenceArray<String> lastFailure = new AtomicReferenceArray<>(CLIENTS);

        Phase(String label) {
            this(label, PROGRESS);
        }

        Phase(String label, int perClientTarget) {
            this.label = label;
            Arrays.setAll(perClient, i -> new CountDownLatch(perClientTarget));
            Arrays.setAll(perLock, i -> new CountDownLatch(1));
        }

        void completed(int client, int lock) {
            acquisitions.increment();
            perClient[client].countDown();
            perLock[lock].countDown();
        }

        /** Waits until the chosen clients (and, if asked, every lock) made progress; false at the deadline. */
        boolean awaitProgress(Duration timeout, IntPredicate clients, boolean everyLock) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            for (int client = 0; client < CLIENTS; client++) {
                if (clients.test(client)
                        && !perClient[client].await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            for (CountDownLatch lock : everyLock ? perLock : new CountDownLatch[0]) {
                if (!lock.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            return true;
        }

        String progress() {
            StringBuilder text = new StringBuilder("critical sections " + acquisitions.sum()
                    + ", per client still missing "
                    + Arrays.stream(perClient).map(l -> Long.toString(l.getCount())).collect(Collectors.joining("/"))
                    + ", locks never taken " + Arrays.stream(perLock).filter(l -> l.getCount() > 0).count());
            for (int client = 0; client < CLIENTS; client++) {
                if (perClient[client].getCount() > 0) {
                    text.append("; client ").append(client).append(" last failed with ")
                            .append(lastFailure.get(client));
                }
            }
            return text.toString();
        }
    }

    /** One probe hold: taken by the probe client, then looked for on the promoted master. */
    private static final class Probe {

        final String name;
        final DistributedLock lock;
        final String field;
        CompletableFuture<Boolean> reply;
        String outcome;
        boolean acquired;

        Probe(Relock client, String name) {
            this.name = name;
            this.lock = client.getLock(name);
            this.field = client.clientId() + ":" + PROBE_OWNER;
        }

        void start() {
            reply = lock.tryLockAsync(0, PROBE_LEASE_MILLIS, TimeUnit.MILLISECONDS, PROBE_OWNER).toCompletableFuture();
        }

        void finish() throws InterruptedException {
            try {
                acquired = reply.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                outcome = acquired ? "acknowledged" : "not acquired";
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RelockException)) {
                    throw new AssertionError("probe acquire of " + name + " failed outside the contract", e.getCause());
                }
                outcome = "refused (" + e.getCause().getClass().getSimpleName() + ")";
            } catch (TimeoutException e) {
                throw new AssertionError("probe acquire of " + name + " still running after " + PROBE_TIMEOUT, e);
            }
        }

        boolean on(RedisServer server) {
            return Long.valueOf(1).equals(server.command("HEXISTS", name, field));
        }

        /** Unlocks an acquired probe; what that says is part of the report, not a failure. */
        void release() throws InterruptedException {
            if (!acquired) {
                return;
            }
            try {
                lock.unlockAsync(PROBE_OWNER).toCompletableFuture()
                        .get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                outcome += ", unlock: " + e.getCause();
            } catch (TimeoutException e) {
                throw new AssertionError("probe release of " + name + " still running after " + PROBE_TIMEOUT, e);
            }
        }
    }

    /** One mode's run: its clients, workers, probes and tallies. */
    private static final class Measurement implements AutoCloseable {

        private final SentinelTopology topology;
        private final String mode;
        private final int syncReplicas;
        private final String prefix;
        private final List<Relock> clients = new ArrayList<>();
        private final Relock probeClient;
        private final List<Thread> workers = new ArrayList<>();
        private final AtomicInteger[] occupancy = new AtomicInteger[LOCKS];
        private volatile boolean stopped;
        private volatile Phase phase = new Phase("start");

        private final LongAdder acquisitions = new LongAdder();
        private final LongAdder incidents = new LongAdder();
        private final LongAdder waitsRanOut = new LongAdder();
        private final LongAdder lostGone = new LongAdder();
        private final LongAdder lostRenewal = new LongAdder();
        private final LongAdder unlockGoneWithinLease = new LongAdder();
        private final LongAdder unlockGoneOther = new LongAdder();
        private final AtomicLong longestCallNanos = new AtomicLong();
        private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
        private final Map<String, String> firstFailures = new ConcurrentHashMap<>();
        private final Map<String, String> unexpected = new ConcurrentHashMap<>();
        private final List<Phase> phases = new ArrayList<>(List.of(phase));
        private final List<String> rounds = new ArrayList<>();
        private final List<String> failedProgress = new ArrayList<>();
        private final List<String> hungWorkers = new ArrayList<>();
        private final List<String> probesLost = new ArrayList<>();
        private int probesAcknowledged;
        private int failovers;
        private int extraFailovers;

        Measurement(SentinelTopology topology, String mode, int syncReplicas) {
            this.topology = topology;
            this.mode = mode;
            this.syncReplicas = syncReplicas;
            this.prefix = "fo:" + syncReplicas + ":";
            Arrays.setAll(occupancy, i -> new AtomicInteger());
            // Sentinel reads a replica's role every 10 s by default; see staleRoleViews(). Every
            // second keeps the wait before each failover short (this test's time budget).
            for (RedisServer sentinel : topology.sentinels()) {
                sentinel.command("SENTINEL", "DEBUG", "INFO-PERIOD", Long.toString(SENTINEL_INFO_PERIOD.toMillis()));
            }
            try {
                for (int i = 0; i < CLIENTS; i++) {
                    Relock client = Relock.create(config());
                    clients.add(client);
                    client.addLockListener(event -> (event.cause() == null ? lostGone : lostRenewal).increment());
                }
                probeClient = Relock.create(config());
            } catch (RuntimeException e) {
                clients.forEach(Relock::close);
                throw e;
            }
        }

        private RelockConfig config() {
            RelockConfig.Builder builder = RelockConfig.builder()
                    .sentinel(topology.masterName(), topology.sentinelUris().toArray(String[]::new))
                    .commandTimeout(COMMAND_TIMEOUT)
                    .watchdogTimeout(WATCHDOG_TIMEOUT);
            if (syncReplicas > 0) {
                builder.replicaSync(syncReplicas, REPLICA_SYNC_TIMEOUT);
            }
            return builder.build();
        }

        /** Starts the workers, fails over once per fault, then stops the workers and prints the report. */
        void execute() throws InterruptedException {
            for (int client = 0; client < CLIENTS; client++) {
                for (int thread = 0; thread < THREADS_PER_CLIENT; thread++) {
                    int c = client;
                    boolean watchdog = thread == 0;
                    String name = "failover-" + mode + "-" + client + "." + thread;
                    Thread worker = new Thread(() -> work(c, watchdog), name);
                    worker.setDaemon(true);
                    workers.add(worker);
                    worker.start();
                }
            }
            try {
                if (phase.awaitProgress(PROGRESS_TIMEOUT, EVERY_CLIENT, true)) {
                    for (int round = 1; round <= FAULTS.size(); round++) {
                        if (!failOver(round, FAULTS.get(round - 1))) {
                            break;
                        }
                    }
                } else {
                    failedProgress.add("before any failover: " + phase.progress());
                }
            } finally {
                stop();
                report();
            }
        }

        /** One failover and the recovery after it; false if the clients did not follow. */
        private boolean failOver(int round, Fault fault) throws InterruptedException {
            long asked = System.nanoTime();
            Eventually.await(TOPOLOGY_TIMEOUT, "every sentinel sees every replica report the replica role",
                    () -> staleRoleViews().isEmpty());
            long caughtUp = System.nanoTime();
            RedisServer previous = topology.master();
            Probe held = new Probe(probeClient, prefix + "held:" + round);
            held.start();
            held.finish();
            enter(new Phase(fault.label + " " + round));
            long start = System.nanoTime();
            RedisServer promoted;
            if (fault == Fault.KILL) {
                previous.kill();
                promoted = topology.awaitMasterChange(previous, TOPOLOGY_TIMEOUT);
            } else {
                promoted = topology.failover(TOPOLOGY_TIMEOUT);
            }
            failovers++;
            long switched = System.nanoTime();
            check(held, promoted);
            Probe deposed = null;
            String split = "";
            if (fault == Fault.SENTINEL_FAILOVER) {
                deposed = takeOnDeposedMaster(round, previous);
                check(deposed, promoted);
                Phase splitPhase = new Phase("split " + round, SPLIT_PROGRESS);
                enter(splitPhase);
                disconnect(previous, DETACHED_FIRST, false);
                boolean detachedLocked = splitPhase.awaitProgress(SPLIT_TIMEOUT, DETACHED_FIRST, false);
                disconnect(previous, EVERY_CLIENT, true);
                split = ", split: clients on the new master " + (detachedLocked ? "locked" : "did not lock") + ", "
                        + splitPhase.acquisitions.sum() + " critical sections";
            }
            topology.restore();
            String settled = settle(promoted);
            long restored = System.nanoTime();
            Phase after = new Phase("after " + round);
            enter(after);
            boolean followed = after.awaitProgress(PROGRESS_TIMEOUT, EVERY_CLIENT, true);
            String stuck = followed ? "" : " (" + after.progress() + "; connections: " + connections() + ")";
            held.release();
            if (deposed != null) {
                deposed.release();
            }
            String line = String.format(Locale.ROOT, "%s %d (port %d → %d, after %d ms for the Sentinels to see the"
                    + " replicas): new master after %d ms, healthy after %d ms%s, %s%s; probe held across: %s%s",
                    fault.label, round, previous.port(), promoted.port(), millis(caughtUp - asked),
                    millis(switched - start), millis(restored - start), settled,
                    followed ? "clients followed" : "clients did NOT follow" + stuck, split, held.outcome,
                    deposed == null ? "" : "; probe on the deposed master: " + deposed.outcome);
            rounds.add(line);
            if (!followed) {
                failedProgress.add(line);
            }
            return followed;
        }

        /**
         * What a Sentinel still takes a replica for a master. {@code restore()} demotes a
         * restarted or deposed master itself, and a Sentinel reads a replica's role once per INFO
         * period: until it sees the demotion, it holds the node for a master it must convert, and
         * converts it back if a failover promotes it meanwhile — which aborts that failover.
         */
        private List<String> staleRoleViews() {
            List<String> stale = new ArrayList<>();
            for (RedisServer sentinel : topology.sentinels()) {
                for (Object replica : (List<?>) sentinel.command("SENTINEL", "REPLICAS", topology.masterName())) {
                    List<?> fields = (List<?>) replica;
                    for (int i = 0; i + 1 < fields.size(); i += 2) {
                        if ("role-reported".equals(fields.get(i)) && !"slave".equals(fields.get(i + 1))) {
                            stale.add("sentinel " + sentinel.port() + " on " + fields.get(1));
                        }
                    }
                }
            }
            return stale;
        }

        /**
         * Takes a probe hold through the probe client, which is still connected to the deposed
         * master (a master still, but with no replica left). With replica sync on, the acquire's
         * WAIT blocks there; the connection is then closed under it, as a network blip would.
         */
        private Probe takeOnDeposedMaster(int round, RedisServer deposed) throws InterruptedException {
            Probe probe = new Probe(probeClient, prefix + "deposed:" + round);
            probe.start();
            String closed = syncReplicas == 0 ? ""
                    : closeBlockedWait(deposed) ? ", connection closed during WAIT" : ", WAIT not seen blocking";
            probe.finish();
            probe.outcome += closed;
            if (probe.acquired && deposed.isRunning() && probe.on(deposed)) {
                probe.outcome += ", on the deposed master";
            }
            return probe;
        }

        /** Closes the probe client's connection to {@code server} once it blocks in WAIT; false if it never did. */
        private boolean closeBlockedWait(RedisServer server) {
            String name = "relock:" + probeClient.clientId();
            long deadline = System.nanoTime() + REPLICA_SYNC_TIMEOUT.toNanos();
            // Each CLIENT LIST is a round trip on a new connection, which paces this poll; the
            // WAIT it looks for blocks for the whole replica-sync timeout.
            while (System.nanoTime() - deadline < 0) {
                for (Map<String, String> connection : clientList(server)) {
                    if (name.equals(connection.get("name")) && "wait".equals(connection.get("cmd"))
                            && connection.getOrDefault("flags", "").contains("b")) {
                        kill(server, connection.get("id"));
                        return true;
                    }
                }
            }
            return false;
        }

        private void check(Probe probe, RedisServer promoted) {
            if (!probe.acquired) {
                return;
            }
            probesAcknowledged++;
            if (probe.on(promoted)) {
                probe.outcome += ", on the promoted master";
            } else {
                probe.outcome += ", LOST: not on the promoted master";
                probesLost.add(probe.name);
            }
        }

        /**
         * After {@link SentinelTopology#restore()}. Under load Sentinel may have failed over once
         * more meanwhile (a just-promoted master that misses its 1 s {@code down-after} is
         * declared down), deposing a running master; {@code restore()} demotes it with
         * {@code REPLICAOF} but, unlike Sentinel's own demotion, does not close its clients'
         * connections, and Relock's clients would stay on a replica. So Relock connections on
         * replicas are closed here, as Sentinel would have.
         */
        private String settle(RedisServer promoted) {
            RedisServer master = topology.master();
            int closed = 0;
            for (RedisServer node : topology.dataNodes()) {
                if (node != master) {
                    closed += disconnect(node, EVERY_CLIENT, true);
                }
            }
            String note = "";
            if (master != promoted) {
                extraFailovers++;
                note += ", the Sentinels failed over again to port " + master.port();
            }
            return note + (closed > 0 ? ", closed " + closed + " Relock connections left on replicas" : "");
        }

        /** Closes the Relock connections (commands and pub/sub) of the chosen clients on {@code server}. */
        private int disconnect(RedisServer server, IntPredicate chosen, boolean probeToo) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                if (chosen.test(i)) {
                    names.add("relock:" + clients.get(i).clientId());
                }
            }
            if (probeToo) {
                names.add("relock:" + probeClient.clientId());
            }
            int closed = 0;
            for (Map<String, String> connection : clientList(server)) {
                if (names.contains(connection.get("name"))) {
                    kill(server, connection.get("id"));
                    closed++;
                }
            }
            return closed;
        }

        private static List<Map<String, String>> clientList(RedisServer server) {
            List<Map<String, String>> connections = new ArrayList<>();
            for (String line : String.valueOf(server.command("CLIENT", "LIST")).split("\n")) {
                Map<String, String> fields = new TreeMap<>();
                for (String pair : line.trim().split(" ")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                    }
                }
                connections.add(fields);
            }
            return connections;
        }

        private static void kill(RedisServer server, String id) {
            try {
                server.command("CLIENT", "KILL", "ID", id);
            } catch (RedisServer.CommandException e) {
                // Gone already: the client closed it itself.
            }
        }

        /** Which node each client's connections are on, for a failure message. */
        private String connections() {
            List<String> nodes = new ArrayList<>();
            for (RedisServer node : topology.dataNodes()) {
                if (!node.isRunning()) {
                    nodes.add(node.port() + " down");
                    continue;
                }
                List<Map<String, String>> list = clientList(node);
                List<String> on = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    String name = "relock:" + clients.get(i).clientId();
                    long count = list.stream().filter(connection -> name.equals(connection.get("name"))).count();
                    if (count > 0) {
                        on.add("client " + i + " ×" + count);
                    }
                }
                nodes.add(node.port() + " " + node.info("replication").lines().filter(l -> l.startsWith("role:"))
                        .findFirst().orElse("role:?") + " " + on);
            }
            return String.join(", ", nodes);
        }

        private void enter(Phase next) {
            phases.add(next);
            phase = next;
        }

        private void work(int client, boolean watchdog) {
            Relock relock = clients.get(client);
            DistributedLock[] locks = new DistributedLock[LOCKS];
            Arrays.setAll(locks, i -> relock.getLock(prefix + i));
            while (!stopped) {
                int index = ThreadLocalRandom.current().nextInt(LOCKS);
                DistributedLock lock = locks[index];
                long asked = System.nanoTime();
                boolean acquired;
                try {
                    acquired = lock.tryLock(WAIT_MILLIS, watchdog ? -1 : LEASE_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (RuntimeException e) {
                    failed(client, "tryLock", e, e instanceof RelockException);
                    // An application's pause before it retries: calls fail at once while the master
                    // refuses connections, and a worker retrying at once would starve the machine.
                    LockSupport.parkNanos(RETRY_PAUSE_NANOS);
                    continue;
                } finally {
                    timed(asked);
                }
                if (!acquired) {
                    waitsRanOut.increment();
                    continue;
                }
                Phase current = phase;
                criticalSection(index, current);
                current.completed(client, index);
                acquisitions.increment();
                long unlocking = System.nanoTime();
                try {
                    lock.unlock();
                } catch (IllegalMonitorStateException e) {
                    failed(client, "unlock", e, true);
                    // From the start of tryLock to the end of unlock is longer than the hold lived on
                    // Redis: under the lease, it cannot have expired — it vanished.
                    boolean withinLease = !watchdog
                            && System.nanoTime() - asked < TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS);
                    (withinLease ? unlockGoneWithinLease : unlockGoneOther).increment();
                } catch (RuntimeException e) {
                    failed(client, "unlock", e, e instanceof RelockException);
                } finally {
                    timed(unlocking);
                }
            }
        }

        private void criticalSection(int index, Phase current) {
            if (occupancy[index].incrementAndGet() > 1) {
                incidents.increment();
                current.incidents.increment();
            }
            long end = System.nanoTime() + CRITICAL_SECTION_NANOS;
            while (System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
            occupancy[index].decrementAndGet();
        }

        private void failed(int client, String operation, RuntimeException e, boolean named) {
            String key = operation + " " + e.getClass().getSimpleName();
            errors.computeIfAbsent(key, k -> new LongAdder()).increment();
            firstFailures.putIfAbsent(key, String.valueOf(e.getMessage()));
            phase.lastFailure.set(client, key + ": " + e.getMessage());
            if (!named) {
                unexpected.putIfAbsent(key, String.valueOf(e));
            }
        }

        private void timed(long startNanos) {
            longestCallNanos.accumulateAndGet(System.nanoTime() - startNanos, Math::max);
        }

        private void stop() throws InterruptedException {
            stopped = true;
            long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
            for (Thread worker : workers) {
                worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (worker.isAlive()) {
                    hungWorkers.add(worker.getName() + " at " + Arrays.stream(worker.getStackTrace())
                            .map(StackTraceElement::toString).collect(Collectors.joining("\n    ", "\n    ", "")));
                }
            }
        }

        private void report() {
            Map<String, Long> errorCounts = new TreeMap<>();
            errors.forEach((key, count) -> errorCounts.put(key, count.sum()));
            Map<String, Long> incidentsByPhase = new TreeMap<>();
            for (Phase p : phases) {
                if (p.incidents.sum() > 0) {
                    incidentsByPhase.put(p.label, p.incidents.sum());
                }
            }
            System.out.println(String.format(Locale.ROOT, "failover measurement [%s]: %d failovers (%s; %d more"
                    + " by Sentinel on its own), %d critical sections, %d two-holder incidents%s, %d waits ran out,"
                    + " failures %s, lost-lease events %d (gone %d, renewal failed %d), unlock found the hold gone %d"
                    + " (%d surely before its lease ran out), acknowledged-then-lost probes %d of %d,"
                    + " longest call %d ms",
                    mode,
                    failovers,
                    FAULTS.subList(0, failovers).stream().map(f -> f.label).collect(Collectors.joining(", ")),
                    extraFailovers, acquisitions.sum(), incidents.sum(),
                    incidentsByPhase.isEmpty() ? "" : " (in " + incidentsByPhase + ")", waitsRanOut.sum(), errorCounts,
                    lostGone.sum() + lostRenewal.sum(), lostGone.sum(), lostRenewal.sum(),
                    unlockGoneWithinLease.sum() + unlockGoneOther.sum(), unlockGoneWithinLease.sum(), probesLost.size(),
                    probesAcknowledged, millis(longestCallNanos.get())));
            rounds.forEach(round -> System.out.println("  " + round));
            new TreeMap<>(firstFailures)
                    .forEach((key, message) -> System.out.println("  first " + key + ": " + message));
            hungWorkers.forEach(worker -> System.out.println("  hung: " + worker));
        }

        private static long millis(long nanos) {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }

        void assertContractKept() {
            assertThat(hungWorkers).as("workers still running %s after being told to stop", STOP_TIMEOUT).isEmpty();
            assertThat(failedProgress).as("failovers after which not every client and lock got critical sections"
                    + " within " + PROGRESS_TIMEOUT).isEmpty();
            assertThat(unexpected).as("failures that are neither RelockException nor IllegalMonitorStateException"
                    + " from unlock").isEmpty();
        }

        @Override
        public void close() {
            stopped = true;
            clients.forEach(Relock::close);
            probeClient.close();
        }
    }
}
