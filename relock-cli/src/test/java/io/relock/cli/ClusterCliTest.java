package io.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.ClusterExtension;
import io.relock.testkit.ClusterTopology;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The commands on a Redis Cluster: {@code list} scans every master, and {@code inspect} counts
 * the waiters where relock-core's locks publish (sharded pub/sub on Redis 7+).
 */
class ClusterCliTest {

    @RegisterExtension
    static final ClusterExtension cluster = ClusterExtension.perClass(ClusterTopology.builder().replicasPerMaster(0));

    @Test
    void listFindsLocksOnEveryMasterAndInspectCountsShardedWaiters(ClusterTopology topology) throws Exception {
        String[] seeds = topology.uris().toArray(String[]::new);
        RelockConfig config = RelockConfig.builder().cluster(seeds).build();
        try (Relock holder = Relock.create(config); Relock other = Relock.create(config)) {
            List<DistributedLock> locks = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                DistributedLock lock = holder.getLock("cluster:" + i);
                lock.lock();
                locks.add(lock);
            }
            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                DistributedLock lock = other.getLock("cluster:0");
                try {
                    boolean acquired = lock.tryLock(30, TimeUnit.SECONDS);
                    if (acquired) {
                        lock.unlock();
                    }
                    return acquired;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
            try {
                Eventually.await(Cli.PROMPTLY, "the waiter subscribed", () -> holder.getLockInfo("cluster:0").waitingClients() == 1);
                List<String> inspect = new ArrayList<>(List.of("inspect", "cluster:0", "--cluster"));
                inspect.addAll(List.of(seeds));
                List<String> list = new ArrayList<>(List.of("list", "cluster:*", "--cluster"));
                list.addAll(List.of(seeds));

                Cli.Result inspected = Cli.run(inspect.toArray(String[]::new));
                Cli.Result listed = Cli.run(list.toArray(String[]::new));

                assertThat(inspected.exitCode()).as(inspected.toString()).isEqualTo(Main.OK);
                assertThat(inspected.out()).containsPattern("type +reentrant").contains(holder.clientId())
                        .containsPattern("waiting +1 client subscribed");
                assertThat(listed.exitCode()).as(listed.toString()).isEqualTo(Main.OK);
                assertThat(listed.out()).contains("6 locks held");
                for (int i = 0; i < 6; i++) {
                    assertThat(listed.out()).containsPattern("cluster:" + i + " +reentrant +");
                }
            } finally {
                for (DistributedLock lock : locks) {
                    lock.unlock();
                }
            }
            assertThat(waiter.get(Cli.PROMPTLY.toSeconds(), TimeUnit.SECONDS)).isTrue();
        }
    }
}
