package io.relock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.FencedLock;
import io.relock.LockLostEvent;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real ensemble of three ZooKeeper servers losing its leader, then its quorum. The histories
 * checked: no two holders (a holder hears its hold ended before another client acquires), and
 * tokens that keep growing across the failover; without a quorum nobody acquires, and with it
 * back the lock works again.
 */
class ZooKeeperEnsembleTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    private TestingCluster ensemble;
    private final String root = "/ensemble/" + UUID.randomUUID();
    private final List<Relock> clients = new ArrayList<>();

    @BeforeEach
    void startEnsemble() throws Exception {
        ensemble = new TestingCluster(3);
        ensemble.start();
    }

    @AfterEach
    void stopEnsemble() throws Exception {
        clients.forEach(Relock::close);
        ensemble.close();
    }

    private Relock client() {
        Relock relock = RelockZooKeeper.builder(ensemble.getConnectString()).root(root)
                .sessionTimeout(Duration.ofSeconds(6))
                .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
                        .watchdogTimeout(Duration.ofSeconds(30)).commandTimeout(Duration.ofSeconds(5)).build())
                .build();
        clients.add(relock);
        return relock;
    }

    /** The server whose {@code srvr} answer says it leads (srvr is the one four-letter word allowed by default). */
    private InstanceSpec leader() {
        for (InstanceSpec spec : ensemble.getInstances()) {
            try (Socket socket = new Socket("127.0.0.1", spec.getPort())) {
                OutputStream out = socket.getOutputStream();
                out.write("srvr".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = socket.getInputStream();
                if (new String(in.readAllBytes(), StandardCharsets.US_ASCII).contains("Mode: leader")) {
                    return spec;
                }
            } catch (IOException e) {
                // Not up, or not serving yet: not the leader.
            }
        }
        return null;
    }

    private static CompletableFuture<Long> acquireInThread(FencedLock lock, LinkedBlockingQueue<Long> acquiredAt) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                Long token = lock.tryLockAndGetToken(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
                acquiredAt.add(System.nanoTime());
                return token;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void theLeadersDeathEndsHoldsBeforeAnyoneElseAcquiresAndTokensKeepGrowing() throws Exception {
        Relock holder = client();
        LinkedBlockingQueue<Long> lostAt = new LinkedBlockingQueue<>();
        holder.addLockListener((LockLostEvent event) -> lostAt.add(System.nanoTime()));
        FencedLock held = holder.getFencedLock("job");
        long firstToken = held.lockAndGetToken();
        LinkedBlockingQueue<Long> acquiredAt = new LinkedBlockingQueue<>();
        CompletableFuture<Long> next = acquireInThread(client().getFencedLock("job"), acquiredAt);
        Eventually.await(PROMPTLY, "a leader among the three", () -> leader() != null);

        assertThat(ensemble.killServer(leader())).isTrue();

        Long lost = lostAt.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost).as("the holder told its hold ended").isNotNull();
        Long nextToken = next.get(PROMPTLY.toMillis() * 2, TimeUnit.MILLISECONDS);
        assertThat(nextToken).as("the waiting client acquired after the failover").isNotNull();
        assertThat(lost).as("told before the other client acquired").isLessThan(acquiredAt.take());
        assertThat(nextToken).isGreaterThan(firstToken);
        assertThat(held.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void withoutAQuorumNobodyAcquiresAndWithItBackTheLockWorks() throws Exception {
        Relock holder = client();
        LinkedBlockingQueue<Long> lostAt = new LinkedBlockingQueue<>();
        holder.addLockListener((LockLostEvent event) -> lostAt.add(System.nanoTime()));
        long firstToken = holder.getFencedLock("job").lockAndGetToken();
        List<InstanceSpec> killed = new ArrayList<>();
        for (InstanceSpec spec : ensemble.getInstances()) {
            if (killed.size() < 2) {
                assertThat(ensemble.killServer(spec)).isTrue();
                killed.add(spec);
            }
        }
        assertThat(lostAt.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the holder told").isNotNull();

        boolean acquiredWithoutQuorum;
        try {
            acquiredWithoutQuorum = holder.getFencedLock("job").tryLock(1, TimeUnit.SECONDS);
        } catch (io.relock.RelockException e) {
            acquiredWithoutQuorum = false;
        }
        assertThat(acquiredWithoutQuorum).as("acquired with one server of three").isFalse();

        assertThat(ensemble.restartServer(killed.get(0))).isTrue();
        java.util.concurrent.atomic.AtomicLong token = new java.util.concurrent.atomic.AtomicLong();
        Eventually.await(PROMPTLY, "the lock acquired with the quorum back", () -> {
            try {
                Long acquired = client().getFencedLock("job").tryLockAndGetToken(1, TimeUnit.SECONDS);
                if (acquired != null) {
                    token.set(acquired);
                }
                return acquired != null;
            } catch (io.relock.RelockException e) {
                return false;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(token.get()).isGreaterThan(firstToken);
    }
}
