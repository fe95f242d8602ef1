package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The reentrant lock under leases, the watchdog, crashes, restarts and outages. */
class ReentrantLockBehaviourTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    private static String field(Relock relock) {
        return relock.clientId() + ":" + Thread.currentThread().getId();
    }

    @Test
    void theWatchdogKeepsALockAcrossManyTimeouts() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        DistributedLock lock = holder.getLock("renewed");
        lock.lock();
        WallClock.letTimePass(Clients.SHORT_WATCHDOG.multipliedBy(4));
        assertThat(clients.create().getLock("renewed").tryLock()).isFalse();
        assertThat(lock.remainTimeToLive()).isPositive();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void theWatchdogStopsRenewingAfterTheLastUnlock() {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        DistributedLock lock = holder.getLock("stopped");
        lock.lock();
        lock.lock();
        lock.unlock();
        lock.unlock();
        // Plant this owner's hold again, expiring after two renewal intervals: a watchdog still
        // renewing it would keep extending it.
        server.command("HSET", "stopped", field(holder), "1");
        server.command("PEXPIRE", "stopped", Long.toString(Clients.SHORT_WATCHDOG.toMillis() * 2 / 3));
        Eventually.await(PROMPTLY, "the planted hold expired", () -> server.command("EXISTS", "stopped").equals(0L));
    }

    @Test
    void aLostLockTellsTheListenerAndTheUnlockSaysSo() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<LockLostEvent> events = new LinkedBlockingQueue<>();
        holder.addLockListener(events::add);
        DistributedLock lock = holder.getLock("vanishing");
        lock.lock();
        server.command("DEL", "vanishing");
        LockLostEvent event = events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event).isNotNull();
        assertThat(event.lockName()).isEqualTo("vanishing");
        assertThat(event.ownerThreadId()).isEqualTo(Thread.currentThread().getId());
        assertThat(event.cause()).isNull();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'vanishing'")
                .hasMessageContaining("lost while held");
        assertThat(lock.tryLock()).as("the name is usable again").isTrue();
        lock.unlock();
    }

    @Test
    void expiredFixedLeaseHoldsThatNobodyUnlocksAreForgotten() throws Exception {
        Relock relock = clients.create(Clients.SHORT_WATCHDOG);
        for (int i = 0; i < 200; i++) {
            assertThat(relock.getLock("marker:" + i).tryLock()).isTrue();
        }
        for (int i = 0; i < 200; i++) {
            relock.getLock("marker:" + i).unlock();
        }
        for (int i = 0; i < 200; i++) {
            assertThat(relock.getLock("dedupe:" + i).tryLock(0, 100, TimeUnit.MILLISECONDS)).isTrue();
        }
        assertThat(relock.trackedHolds()).isEqualTo(200);
        Eventually.await(PROMPTLY, "expired holds forgotten", () -> relock.trackedHolds() == 0);
    }

    @Test
    void aListenerThatThrowsDoesNotStopTheOthers() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<LockLostEvent> events = new LinkedBlockingQueue<>();
        holder.addLockListener(event -> {
            throw new IllegalStateException("listener failure on purpose");
        });
        holder.addLockListener(events::add);
        holder.getLock("noisy").lock();
        server.command("DEL", "noisy");
        assertThat(events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isNotNull();
    }

    @Test
    void aRestartOfRedisIsNoticedWaitersDoNotHangAndNewLocksWork() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<LockLostEvent> events = new LinkedBlockingQueue<>();
        holder.addLockListener(events::add);
        holder.getLock("restarted").lock();
        DistributedLock waiterLock = clients.create().getLock("restarted");
        CompletableFuture<Boolean> waiter = Threads.call(() -> waiterLock.tryLock(60, TimeUnit.SECONDS));
        server.restart();
        LockLostEvent event = events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event).isNotNull();
        assertThat(event.lockName()).isEqualTo("restarted");
        // The waiter does not hang: the restarted server has no lock, so it gets it, unless an
        // attempt was on the wire when the connection broke, which it reports as Redis trouble.
        try {
            assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(RelockConnectionException.class);
        }
        DistributedLock fresh = holder.getLock("after-restart");
        assertThat(fresh.tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        fresh.unlock();
    }

    @Test
    void redisDownMakesCallsWithoutAWaitThrowWithinTheCommandTimeout() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("unreachable");
        server.kill();
        long bound = Clients.COMMAND_TIMEOUT.toMillis() + 2000;
        long start = System.nanoTime();
        assertThatThrownBy(lock::tryLock).isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining("'unreachable'");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(bound);
        start = System.nanoTime();
        assertThatThrownBy(() -> relock.getLockInfo("unreachable")).isInstanceOf(RelockConnectionException.class);
        assertThatThrownBy(() -> relock.forceUnlock("unreachable")).isInstanceOf(RelockConnectionException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(bound);
    }

    @Test
    void creatingAClientForAnUnreachableServerFailsClearly() {
        server.kill();
        assertThatThrownBy(clients::create)
                .isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining("Unable to connect to 127.0.0.1:" + server.port() + ": Connection refused")
                .hasMessageNotContaining("<unresolved>")
                .hasMessageNotContaining("Connection refused: Connection refused");
    }

    @Test
    void anAcquireWhoseReplyWasLostIsUndone() {
        Relock relock = clients.create(Clients.STEADY_WATCHDOG);
        DistributedLock lock = relock.getLock("lost-reply");
        server.pause();
        try {
            assertThatThrownBy(lock::tryLock).isInstanceOf(RelockTimeoutException.class);
        } finally {
            server.resume();
        }
        // The paused server applies the acquire on resume, then the owner-checked undo: without
        // the undo the lock would stay held for its 30 s lease.
        Eventually.await(PROMPTLY, "the lost acquire was undone", () -> server.command("EXISTS", "lost-reply").equals(0L));
        assertThat(clients.create().getLock("lost-reply").tryLock()).isTrue();
    }

    @Test
    void aHolderProcessKilledWithSigkillFreesTheLockWithinItsLease() throws Exception {
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "crashing",
                Long.toString(Clients.SHORT_WATCHDOG.toMillis()))) {
            child.awaitLine("LOCKED", LockContractTest.CHILD_START);
            DistributedLock lock = clients.create().getLock("crashing");
            assertThat(lock.tryLock()).isFalse();
            child.kill();
            long start = System.nanoTime();
            assertThat(lock.tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(waited).as("freed by the lease, not by waiting out the test").isLessThan(PROMPTLY.toMillis());
            lock.unlock();
        }
    }

    @Test
    void aHolderInAnotherProcessHandsOverOnUnlock() throws Exception {
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "shared", "30000")) {
            child.awaitLine("LOCKED", LockContractTest.CHILD_START);
            DistributedLock lock = clients.create().getLock("shared");
            CompletableFuture<Boolean> waiter = Threads.call(() -> lock.tryLock(30, TimeUnit.SECONDS));
            child.send("release");
            child.awaitLine("RELEASED", PROMPTLY);
            assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void lockInfoShowsHoldersCountsLeaseAndWaiters() throws Exception {
        Relock holder = clients.create();
        DistributedLock lock = holder.getLock("inspected");
        lock.lock();
        lock.lock();
        DistributedLock other = clients.create().getLock("inspected");
        CompletableFuture<Boolean> waiter = Threads.call(() -> other.tryLock(30, TimeUnit.SECONDS));
        Eventually.await(PROMPTLY, "a waiter", () -> holder.getLockInfo("inspected").waitingClients() == 1);
        LockInfo info = holder.getLockInfo("inspected");
        assertThat(info.isLocked()).isTrue();
        assertThat(info.holders()).containsExactly(java.util.Map.entry(field(holder), 2L));
        assertThat(info.remainTimeToLive()).isBetween(1L, Clients.STEADY_WATCHDOG.toMillis());
        lock.unlock();
        lock.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(holder.getLockInfo("never-used"))
                .isEqualTo(new LockInfo("never-used", java.util.Map.of(), -2, 0));
    }

    @Test
    void theWireFormatIsRedissons() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("wire");
        lock.lock();
        lock.lock();
        assertThat(server.command("TYPE", "wire")).isEqualTo("hash");
        assertThat(server.command("HGET", "wire", field(relock))).isEqualTo("2");
        assertThat((Long) server.command("PTTL", "wire")).isBetween(1L, Clients.STEADY_WATCHDOG.toMillis());
        lock.unlock();
        lock.unlock();
    }

    @Test
    void aKeyPrefixIsPutBeforeEveryName() {
        Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).keyPrefix("app:").build());
        try {
            DistributedLock lock = relock.getLock("job");
            lock.lock();
            assertThat(server.command("EXISTS", "app:job")).isEqualTo(1L);
            assertThat(lock.getName()).isEqualTo("job");
            lock.unlock();
        } finally {
            relock.close();
        }
    }

    @Test
    void oneClientUsesTwoConnectionsHoweverManyThreadsWait() throws Exception {
        Relock other = clients.create(Clients.SHORT_WATCHDOG);
        other.getLock("crowded").lock();
        other.getLock("crowded-too").lock();
        Relock relock = clients.create();
        List<CompletableFuture<Boolean>> waiters = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            DistributedLock lock = relock.getLock(i % 2 == 0 ? "crowded" : "crowded-too");
            waiters.add(Threads.call(() -> {
                boolean acquired = lock.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    lock.unlock();
                }
                return acquired;
            }));
        }
        Eventually.await(PROMPTLY, "both channels subscribed", () -> relock.getLockInfo("crowded").waitingClients() == 1
                && relock.getLockInfo("crowded-too").waitingClients() == 1);
        String clientList = (String) server.command("CLIENT", "LIST");
        long connections = clientList.lines().filter(line -> line.contains("name=relock:" + relock.clientId())).count();
        assertThat(connections).isEqualTo(2);
        other.close();
        for (CompletableFuture<Boolean> waiter : waiters) {
            assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void aClientRunsAtMostFiveThreadsAndCloseStopsThem() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        Relock relock = clients.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<LockLostEvent> events = new LinkedBlockingQueue<>();
        relock.addLockListener(events::add);
        DistributedLock lock = relock.getLock("footprint");
        lock.lock();
        CompletableFuture<Boolean> waiter = Threads.call(() -> relock.getLock("footprint").tryLock(200, TimeUnit.MILLISECONDS));
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        server.command("DEL", "footprint");
        assertThat(events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("listener ran").isNotNull();
        List<Thread> started = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> !before.contains(thread))
                .filter(thread -> thread.getName().startsWith("lettuce-") || thread.getName().startsWith("relock-"))
                .toList();
        assertThat(started).as("threads of one client: %s", started).hasSizeLessThanOrEqualTo(5);
        relock.close();
        for (Thread thread : started) {
            thread.join(PROMPTLY.toMillis());
            assertThat(thread.isAlive()).as("%s stopped by close()", thread.getName()).isFalse();
        }
    }

    @Test
    void closingTheClientFailsItsWaitersAndRejectsNewWork() throws Exception {
        clients.create().getLock("closing").lock();
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("closing");
        CompletableFuture<Void> waiter = Threads.run(() -> {
            lock.lock();
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter subscribed", () -> relock.getLockInfo("closing").waitingClients() == 1);
        relock.close();
        assertThatThrownBy(() -> waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> relock.getLock("closing")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalStateException.class);
        relock.close();
    }

    @Test
    void lockNamesAreChecked() {
        Relock relock = clients.create();
        assertThatThrownBy(() -> relock.getLock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> relock.getLock("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> relock.getLockInfo("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> relock.addLockListener(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("listener");
        assertThat(Backend.lockKeys(server)).isZero();
    }

    @Test
    void blankNamesAreRefusedWhereverANameIsTaken() {
        Relock relock = clients.create();
        List<Consumer<String>> takers = List.of(relock::getLock, relock::getFairLock, relock::getFencedLock,
                relock::getReadWriteLock, relock::getSpinLock, relock::getSimpleLock, relock::getLeaderElection,
                relock::getLockInfo, relock::forceUnlock);
        for (String blank : List.of("", " ", "  ", "\t", " \n ")) {
            for (Consumer<String> taker : takers) {
                assertThatThrownBy(() -> taker.accept(blank)).as("name '%s'", blank)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("name must not be blank");
            }
        }
        // Whitespace around other characters is part of a name, as any character is.
        DistributedLock padded = relock.getLock(" padded ");
        assertThat(padded.tryLock()).isTrue();
        assertThat(relock.getLockInfo(" padded ").isLocked()).isTrue();
        padded.unlock();
        assertThat(Backend.lockKeys(server)).isZero();
    }
}
