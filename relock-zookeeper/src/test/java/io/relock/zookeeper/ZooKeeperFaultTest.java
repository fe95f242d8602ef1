package io.relock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.LockForceUnlockedException;
import io.relock.LockLostEvent;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockConnectionException;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.zookeeper.internal.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a lost session or connection does to holds, on a real ZooKeeper. The histories checked:
 * no two holders (a holder cut off hears that its hold ended before another client can get the
 * lock); nothing held that no client believes it holds (the nodes of ended holds go, once their
 * holders have heard); a hold removed by someone else is reported to its owner as such. Faults are driven: a proxy that
 * black-holes the connection, an injected session expiry, a force-unlock.
 */
class ZooKeeperFaultTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(20);
    /** The smallest session ZooKeeper grants with its default tick of 2 s. */
    private static final Duration SESSION = Duration.ofSeconds(4);

    private static TestZooKeeper zookeeper;

    private final String root = "/faults/" + UUID.randomUUID();
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private RelockConfig config(Duration watchdog) {
        return RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER).watchdogTimeout(watchdog)
                .commandTimeout(Duration.ofSeconds(2)).build();
    }

    private Relock client(String connectString) {
        Relock relock = RelockZooKeeper.builder(connectString).root(root).sessionTimeout(SESSION)
                .config(config(Duration.ofSeconds(30))).build();
        open.add(relock);
        return relock;
    }

    private CuratorFramework curator(String connectString) throws InterruptedException {
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) SESSION.toMillis()).connectionTimeoutMs(2000)
                .retryPolicy(new RetryOneTime(100)).build();
        curator.start();
        curator.blockUntilConnected();
        open.add(curator);
        return curator;
    }

    private List<String> nodes(String name) {
        return zookeeper.nodes(root, name);
    }

    private static CompletableFuture<Long> acquireInThread(DistributedLock lock) {
        CompletableFuture<Long> acquiredAt = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                if (lock.tryLock(PROMPTLY.toSeconds(), TimeUnit.SECONDS)) {
                    acquiredAt.complete(System.nanoTime());
                    lock.unlock();
                } else {
                    acquiredAt.completeExceptionally(new AssertionError("not acquired within " + PROMPTLY));
                }
            } catch (Throwable e) {
                acquiredAt.completeExceptionally(e);
            }
        });
        thread.start();
        return acquiredAt;
    }

    @Test
    void aHolderCutOffHearsItsHoldEndedBeforeAnotherClientCanTakeIt() throws Exception {
        FaultProxy proxy = FaultProxy.to("127.0.0.1", zookeeper.port());
        open.add(proxy);
        Relock cutOff = client(proxy.host() + ":" + proxy.port());
        Relock other = client(zookeeper.connectString());
        LinkedBlockingQueue<Long> lostAt = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<LockLostEvent> losses = new LinkedBlockingQueue<>();
        cutOff.addLockListener(event -> {
            lostAt.add(System.nanoTime());
            losses.add(event);
        });
        DistributedLock held = cutOff.getLock("order:42");
        held.lock();

        proxy.blackhole();
        CompletableFuture<Long> acquiredAt = acquireInThread(other.getLock("order:42"));

        Long lost = lostAt.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost).as("the cut-off holder heard of its loss").isNotNull();
        assertThat(losses.take().cause()).isInstanceOf(RelockConnectionException.class);
        long acquired = acquiredAt.get(PROMPTLY.toMillis() * 2, TimeUnit.MILLISECONDS);
        assertThat(lost).as("the loss was heard before the other client acquired").isLessThan(acquired);
        assertThat(held.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(held::unlock).isInstanceOf(IllegalMonitorStateException.class);
        proxy.heal();
    }

    @Test
    void theEndedHoldsNodeStaysUntilItsHoldersListenersHaveHeard() throws Exception {
        FaultProxy proxy = FaultProxy.to("127.0.0.1", zookeeper.port());
        open.add(proxy);
        CuratorFramework curator = curator(proxy.host() + ":" + proxy.port());
        // A command timeout longer than the test's steps: it bounds how long a listener may hold the node.
        Relock cutOff = RelockZooKeeper.builder(curator).root(root)
                .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
                        .commandTimeout(Duration.ofSeconds(20)).build())
                .build();
        open.add(cutOff);
        CountDownLatch listening = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        cutOff.addLockListener(event -> {
            listening.countDown();
            try {
                letGo.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        cutOff.getLock("report").lock();
        DistributedLock rival = client(zookeeper.connectString()).getLock("report");

        proxy.refuse();
        assertThat(listening.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the listener was called").isTrue();
        proxy.heal();
        Eventually.await(PROMPTLY, "reconnected", () -> curator.getZookeeperClient().isConnected());

        // Reconnected with the session: the node would go now, but the holder's listener is still busy.
        assertThat(nodes("report")).as("the ended hold's node while its listener runs").hasSize(1);
        assertThat(rival.tryLock(0, TimeUnit.SECONDS)).isFalse();
        letGo.countDown();
        Eventually.await(PROMPTLY, "the given-up hold's node deleted", () -> nodes("report").isEmpty());
        assertThat(rival.tryLock(PROMPTLY.toSeconds(), TimeUnit.SECONDS)).isTrue();
        rival.unlock();
    }

    @Test
    void afterAReconnectInTimeTheEndedHoldsNodeGoesSoNothingStaysHeld() throws Exception {
        FaultProxy proxy = FaultProxy.to("127.0.0.1", zookeeper.port());
        open.add(proxy);
        CuratorFramework curator = curator(proxy.host() + ":" + proxy.port());
        Relock cutOff = RelockZooKeeper.builder(curator).root(root).config(config(Duration.ofSeconds(30))).build();
        open.add(cutOff);
        long session = curator.getZookeeperClient().getZooKeeper().getSessionId();
        LinkedBlockingQueue<LockLostEvent> losses = new LinkedBlockingQueue<>();
        cutOff.addLockListener(losses::add);
        cutOff.getLock("job").lock();
        assertThat(nodes("job")).hasSize(1);

        // A dead server's port: the connection drops at once (SUSPENDED), and reconnecting fails
        // fast until heal(), well within the session timeout.
        proxy.refuse();
        assertThat(losses.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the suspended hold's loss").isNotNull();
        proxy.heal();

        // The session survived (the connection came back before it could expire), and with it
        // the node; the client that gave the hold up deletes it.
        Eventually.await(PROMPTLY, "the given-up hold's node deleted", () -> nodes("job").isEmpty());
        assertThat(curator.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
        assertThat(client(zookeeper.connectString()).getLock("job").tryLock(0, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void anExpiredSessionEndsItsHoldsTellsTheHolderAndLetsTheNextIn() throws Exception {
        CuratorFramework curator = curator(zookeeper.connectString());
        Relock expiring = RelockZooKeeper.builder(curator).root(root).config(config(Duration.ofSeconds(30))).build();
        open.add(expiring);
        LinkedBlockingQueue<LockLostEvent> losses = new LinkedBlockingQueue<>();
        expiring.addLockListener(losses::add);
        FencedLock held = expiring.getFencedLock("account:7");
        long firstToken = held.lockAndGetToken();
        FencedLock next = client(zookeeper.connectString()).getFencedLock("account:7");
        CompletableFuture<Long> nextToken = CompletableFuture.supplyAsync(() -> {
            try {
                return next.tryLockAndGetToken(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Eventually.await(PROMPTLY, "the next client waiting", () -> nodes("account:7").size() == 2);

        curator.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

        LockLostEvent loss = losses.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(loss).as("the expired holder's loss").isNotNull();
        assertThat(loss.lockName()).isEqualTo("account:7");
        assertThat(nextToken.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the next holder's token")
                .isGreaterThan(firstToken);
        assertThatThrownBy(held::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void aForceUnlockedHolderIsToldWhyWithinAWatchdogTick() throws Exception {
        Relock holder = RelockZooKeeper.builder(zookeeper.connectString()).root(root)
                .config(config(Duration.ofMillis(1500))).build();
        open.add(holder);
        LinkedBlockingQueue<LockLostEvent> losses = new LinkedBlockingQueue<>();
        holder.addLockListener(losses::add);
        holder.getLock("forced").lock();
        Relock admin = client(zookeeper.connectString());

        assertThat(admin.forceUnlock("forced")).isTrue();

        LockLostEvent loss = losses.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(loss).isNotNull();
        assertThat(loss.cause()).isInstanceOf(LockForceUnlockedException.class);
        assertThat(admin.getLock("forced").tryLock(0, TimeUnit.SECONDS)).isTrue();
        assertThat(admin.forceUnlock("free-anyway")).isFalse();
    }

    @Test
    void closingOnTheApplicationsCuratorDeletesRelocksNodesAndLeavesCuratorOpen() throws Exception {
        CuratorFramework curator = curator(zookeeper.connectString());
        Relock relock = RelockZooKeeper.builder(curator).root(root).config(config(Duration.ofSeconds(30))).build();
        relock.getLock("a").lock();
        relock.getReadWriteLock("b").readLock().lock();
        assertThat(nodes("a")).hasSize(1);

        relock.close();

        assertThat(curator.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        assertThat(nodes("a")).isEmpty();
        assertThat(nodes("b")).isEmpty();
    }

    @Test
    void badSettingsAreRefusedNamingTheArgument() throws Exception {
        assertThatThrownBy(() -> RelockZooKeeper.builder((String) null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("connectString");
        assertThatThrownBy(() -> RelockZooKeeper.builder(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connectString");
        RelockZooKeeper.Builder builder = RelockZooKeeper.builder(zookeeper.connectString());
        assertThatThrownBy(() -> builder.root("relative")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("root");
        assertThatThrownBy(() -> builder.root("/a/../b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("root");
        assertThatThrownBy(() -> builder.sessionTimeout(Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> builder.operationThreads(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operationThreads");
        CuratorFramework notStarted = CuratorFrameworkFactory.newClient(zookeeper.connectString(),
                new RetryOneTime(100));
        assertThatThrownBy(() -> RelockZooKeeper.builder(notStarted)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("curator");
        assertThatThrownBy(() -> RelockZooKeeper.builder(curator(zookeeper.connectString()))
                .sessionTimeout(SESSION)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout");
        Relock relock = client(zookeeper.connectString());
        assertThatThrownBy(() -> relock.getLock("x".repeat(ZkClient.MAX_NAME_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
    }

    @Test
    void noServerMeansAConnectionExceptionAtBuild() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> RelockZooKeeper.builder("127.0.0.1:1").root(root)
                .config(config(Duration.ofSeconds(30))).build())
                .isInstanceOf(RelockConnectionException.class).hasMessageContaining("127.0.0.1:1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PROMPTLY);
    }

    @Test
    void oddNamesAreLocksOfTheirOwn() throws Exception {
        Relock relock = client(zookeeper.connectString());
        List<String> names = List.of(".", "..", "a/b", "a%2Fb", "ключ", "x y", "emoji-😀", "zookeeper", "a\u0001b");
        List<DistributedLock> held = new ArrayList<>();
        for (String name : names) {
            DistributedLock lock = relock.getLock(name);
            assertThat(lock.tryLock(0, TimeUnit.SECONDS)).as(name).isTrue();
            held.add(lock);
        }
        for (int i = 0; i < names.size(); i++) {
            assertThat(relock.getLockInfo(names.get(i)).holders()).as(names.get(i)).hasSize(1);
            held.get(i).unlock();
        }
    }
}
