package io.relock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The queue across clients when a waiter leaves it. A waiter takes the lock without reading the
 * children when the one node it watched was the only one in its way; a waiter whose watched node
 * leaves while an earlier node still holds must wait on. The history checked: no two holders
 * (the last waiter gets the lock only after the holder released it), and the queue is served in
 * order. The leaving waiter is interrupted, not timed out: the test decides when it leaves.
 */
class ZooKeeperQueueTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(20);

    private static TestZooKeeper zookeeper;

    private final String root = "/queue/" + UUID.randomUUID();
    private final List<Relock> clients = new ArrayList<>();

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(Relock::close);
    }

    private Relock client() {
        Relock relock = RelockZooKeeper.builder(zookeeper.connectString()).root(root)
                .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER).build()).build();
        clients.add(relock);
        return relock;
    }

    private int nodes(String name) {
        return zookeeper.nodes(root, name).size();
    }

    @Test
    void aWaiterWhosePredecessorLeavesWaitsForTheHolder() throws Exception {
        leavingWaiter(relock -> relock.getLock("order:42"), relock -> relock.getLock("order:42"));
    }

    @Test
    void aReaderBehindALeavingWriterWaitsForTheWriterHolding() throws Exception {
        leavingWaiter(relock -> relock.getReadWriteLock("order:42").writeLock(),
                relock -> relock.getReadWriteLock("order:42").readLock());
    }

    /**
     * A holds with {@code holding}; B then waits with {@code holding} and C with {@code last},
     * three clients; B leaves; A releases; C must get the lock then, and not before.
     */
    private void leavingWaiter(Function<Relock, DistributedLock> holding, Function<Relock, DistributedLock> last)
            throws Exception {
        DistributedLock a = holding.apply(client());
        DistributedLock b = holding.apply(client());
        DistributedLock c = last.apply(client());
        a.lock();
        AtomicBoolean released = new AtomicBoolean();

        CompletableFuture<Void> bEnded = new CompletableFuture<>();
        Thread bWaiter = new Thread(() -> {
            try {
                b.lockInterruptibly();
                b.unlock();
                bEnded.completeExceptionally(new AssertionError("B got the lock while A held it"));
            } catch (InterruptedException e) {
                bEnded.complete(null);
            } catch (Throwable e) {
                bEnded.completeExceptionally(e);
            }
        });
        bWaiter.start();
        Eventually.await(PROMPTLY, "B's node is queued behind A's", () -> nodes("order:42") == 2);

        CompletableFuture<Boolean> cAcquiredAfterRelease = new CompletableFuture<>();
        Thread cWaiter = new Thread(() -> {
            try {
                if (c.tryLock(PROMPTLY.toSeconds(), TimeUnit.SECONDS)) {
                    cAcquiredAfterRelease.complete(released.get());
                    c.unlock();
                } else {
                    cAcquiredAfterRelease.completeExceptionally(new AssertionError("C not served within " + PROMPTLY));
                }
            } catch (Throwable e) {
                cAcquiredAfterRelease.completeExceptionally(e);
            }
        });
        cWaiter.start();
        Eventually.await(PROMPTLY, "C's node is queued behind B's", () -> nodes("order:42") == 3);

        bWaiter.interrupt();
        bEnded.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        Eventually.await(PROMPTLY, "B's node has left the queue", () -> nodes("order:42") == 2);
        assertThat(cAcquiredAfterRelease).as("C waits while A holds").isNotDone();

        released.set(true);
        a.unlock();
        assertThat(cAcquiredAfterRelease.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS))
                .as("C got the lock after A released it").isTrue();
        Eventually.await(PROMPTLY, "the queue is empty", () -> nodes("order:42") == 0);
    }
}
