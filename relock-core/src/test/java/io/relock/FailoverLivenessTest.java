package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.ClusterTopology;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After a failover every client keeps moving: three clients with two threads each hand one lock
 * around; the lock's master is killed; once a replica is promoted and the other replica
 * replicates from it again, the lock runs at its usual rate within {@link #RECOVERY} and every
 * client gets turns.
 *
 * <p>History checked: no two holders at once (an overlap detector inside the critical section,
 * before, during and after the failover), and liveness after it: in the {@link #WINDOW} that
 * starts {@link #RECOVERY} after the topology is healthy again, the lock is acquired at no less
 * than {@link #RATE_KEPT} of its rate before the kill, and each client gets no less than
 * {@link #CLIENT_SHARE} of an equal share of those acquisitions. On Sentinel and Cluster, with
 * and without replica sync.
 */
class FailoverLivenessTest {

    @RegisterExtension
    static final SharedTopology<SentinelTopology> sentinel = SharedTopology.sentinel();

    /** Two replicas per master, so that replica sync (one acknowledgement) can go on after one is promoted. */
    private static ClusterTopology cluster;

    /**
     * From the topology being healthy again to the lock running at its usual rate; measured, see
     * docs/topologies-and-guarantees.md.
     */
    static final Duration RECOVERY = Duration.ofSeconds(2);
    private static final Duration WINDOW = Duration.ofSeconds(3);
    private static final Duration BEFORE = Duration.ofSeconds(3);
    private static final Duration BUCKET = Duration.ofMillis(500);
    private static final double RATE_KEPT = 0.3;
    private static final double CLIENT_SHARE = 0.25;

    private final List<Relock> open = new ArrayList<>();

    @AfterEach
    void closeClients() {
        open.forEach(Relock::close);
        open.clear();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static ClusterTopology cluster() {
        if (cluster == null) {
            cluster = ClusterTopology.builder().replicasPerMaster(2).start();
        } else {
            cluster.restore();
            cluster.flushAll();
        }
        return cluster;
    }

    @Test
    void onSentinelEveryClientKeepsMovingAfterTheMasterDies() throws Exception {
        SentinelTopology topology = sentinel.topology();
        run(Backend.sentinel(topology), false, "sentinel-live", topology::master,
                killed -> topology.awaitMasterChange(killed, Duration.ofSeconds(30)));
    }

    @Test
    void onSentinelWithReplicaSyncEveryClientKeepsMovingAfterTheMasterDies() throws Exception {
        SentinelTopology topology = sentinel.topology();
        run(Backend.sentinel(topology), true, "sentinel-live-sync", topology::master,
                killed -> topology.awaitMasterChange(killed, Duration.ofSeconds(30)));
    }

    @Test
    void onClusterEveryClientKeepsMovingAfterTheMasterDies() throws Exception {
        ClusterTopology topology = cluster();
        run(Backend.cluster(topology), false, "cluster-live", () -> topology.masterFor("cluster-live"),
                killed -> promoted(topology, "cluster-live", killed));
    }

    @Test
    void onClusterWithReplicaSyncEveryClientKeepsMovingAfterTheMasterDies() throws Exception {
        ClusterTopology topology = cluster();
        run(Backend.cluster(topology), true, "cluster-live-sync", () -> topology.masterFor("cluster-live-sync"),
                killed -> promoted(topology, "cluster-live-sync", killed));
    }

    private static RedisServer promoted(ClusterTopology topology, String name, RedisServer killed) {
        RedisServer[] now = new RedisServer[1];
        Eventually.await(Duration.ofSeconds(30), "a replica promoted in place of port " + killed.port(), () -> {
            try {
                now[0] = topology.masterFor(name);
                return !now[0].equals(killed);
            } catch (RuntimeException e) {
                return false;
            }
        });
        return now[0];
    }

    interface Promotion {
        RedisServer await(RedisServer killed);
    }

    private void run(Backend backend, boolean replicaSync, String name, Supplier<RedisServer> master,
            Promotion promotion) throws Exception {
        List<Participant> participants = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockConfig.Builder config = backend.config().get().watchdogTimeout(Clients.STEADY_WATCHDOG)
                    .commandTimeout(Clients.COMMAND_TIMEOUT);
            if (replicaSync) {
                config.replicaSync(1, Duration.ofMillis(500));
            }
            Relock client = Relock.create(config.build());
            open.add(client);
            for (int t = 0; t < 2; t++) {
                participants.add(new Participant(c, client.getLock(name)));
            }
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (Participant participant : participants) {
            running.add(Threads.run(() -> {
                participant.loop(stop, inside, overlaps);
                return null;
            }));
        }
        try {
            long before = count(participants, BEFORE);
            RedisServer killed = master.get();
            long killedAt = System.nanoTime();
            killed.kill();
            RedisServer promoted = promotion.await(killed);
            Eventually.await(Duration.ofSeconds(30), "a replica replicating from the promoted master",
                    () -> onlineReplicas(promoted) >= 1);
            long healthyAt = System.nanoTime();
            // The rate in each half second from the moment the topology is healthy again, for the
            // report; the checks take the window after RECOVERY.
            List<Long> series = new ArrayList<>();
            long recovering = RECOVERY.toMillis() / BUCKET.toMillis();
            long[] windowStart = null;
            for (int bucket = 0; bucket < recovering + WINDOW.toMillis() / BUCKET.toMillis(); bucket++) {
                if (bucket == recovering) {
                    windowStart = perClient(participants);
                }
                series.add(count(participants, BUCKET) * 1000 / BUCKET.toMillis());
            }
            long[] window = perClient(participants);
            long total = 0;
            for (int c = 0; c < window.length; c++) {
                window[c] -= windowStart[c];
                total += window[c];
            }
            System.out.printf("[failover liveness] %s: %d acq/s before the kill; healthy again %d ms after it; then "
                    + "acq/s per %d ms: %s; per client in the window from %d ms: %s; calls that met the failover: %d%n",
                    name, before * 1000 / BEFORE.toMillis(), TimeUnit.NANOSECONDS.toMillis(healthyAt - killedAt),
                    BUCKET.toMillis(), series, RECOVERY.toMillis(), java.util.Arrays.toString(window),
                    participants.stream().mapToLong(p -> p.errors.get()).sum());
            assertThat((double) total / WINDOW.toMillis()).as("rate after the failover against before")
                    .isGreaterThanOrEqualTo(RATE_KEPT * before / BEFORE.toMillis());
            for (long client : window) {
                assertThat((double) client).as("a client's acquisitions after the failover, of " + total)
                        .isGreaterThanOrEqualTo(CLIENT_SHARE * total / window.length);
            }
        } finally {
            stop.set(true);
            for (CompletableFuture<Void> worker : running) {
                worker.get(60, TimeUnit.SECONDS);
            }
        }
        assertThat(overlaps).as("two holders at once").hasValue(0);
    }

    /** Acquisitions of all participants over {@code period}. */
    private static long count(List<Participant> participants, Duration period) {
        long start = participants.stream().mapToLong(p -> p.acquisitions.get()).sum();
        long from = System.nanoTime();
        Eventually.await(period.plusSeconds(1), "the period passed", () -> System.nanoTime() - from >= period.toNanos());
        return participants.stream().mapToLong(p -> p.acquisitions.get()).sum() - start;
    }

    private static long[] perClient(List<Participant> participants) {
        long[] counts = new long[3];
        for (Participant p : participants) {
            counts[p.client] += p.acquisitions.get();
        }
        return counts;
    }

    private static int onlineReplicas(RedisServer master) {
        try {
            return (int) master.info("replication").lines()
                    .filter(line -> line.startsWith("slave") && line.contains("state=online")).count();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static final class Participant {

        final int client;
        final DistributedLock lock;
        final AtomicLong acquisitions = new AtomicLong();
        final AtomicLong errors = new AtomicLong();

        Participant(int client, DistributedLock lock) {
            this.client = client;
            this.lock = lock;
        }

        void loop(AtomicBoolean stop, AtomicBoolean inside, AtomicInteger overlaps) throws InterruptedException {
            while (!stop.get()) {
                try {
                    if (!lock.tryLock(5, TimeUnit.SECONDS)) {
                        continue;
                    }
                } catch (RelockException e) {
                    // The failover: a call that met the dead master or too few replicas. Counted, not a result.
                    errors.incrementAndGet();
                    continue;
                }
                try {
                    if (!inside.compareAndSet(false, true)) {
                        overlaps.incrementAndGet();
                    }
                    acquisitions.incrementAndGet();
                    inside.set(false);
                } finally {
                    release();
                }
            }
        }

        /**
         * Unlocks; a release that met the failover leaves the hold as it was (see
         * {@link DistributedLock#unlock()}), so it is tried again, as an application must.
         */
        private void release() {
            for (int attempt = 1; ; attempt++) {
                try {
                    lock.unlock();
                    return;
                } catch (IllegalMonitorStateException e) {
                    // The failover took the hold: a promoted replica without it.
                    errors.incrementAndGet();
                    return;
                } catch (RelockException e) {
                    errors.incrementAndGet();
                    if (attempt == 30) {
                        throw e;
                    }
                }
            }
        }
    }
}
