package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** RedLock over five real, independent masters, some of them killed or paused. */
class RedLockTest {

    private static final int NODES = 5;
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    private static final List<RedisServer> servers = new ArrayList<>();

    private final List<Relock> opened = new ArrayList<>();

    @BeforeAll
    static void startMasters() {
        for (int i = 0; i < NODES; i++) {
            servers.add(RedisServer.start());
        }
    }

    @AfterAll
    static void stopMasters() {
        servers.forEach(RedisServer::close);
        servers.clear();
    }

    @BeforeEach
    void healAll() {
        for (RedisServer server : servers) {
            if (server.isPaused()) {
                server.resume();
            }
            if (!server.isRunning()) {
                server.restart();
            }
            server.flushAll();
        }
    }

    @AfterEach
    void closeClients() {
        opened.forEach(Relock::close);
        opened.clear();
    }

    /** One contender: a client per master, and the RedLock over their locks. */
    private DistributedLock contender(String name) {
        return contender(name, Clients.STEADY_WATCHDOG);
    }

    private DistributedLock contender(String name, Duration watchdog) {
        return contender(name, watchdog, COMMAND_TIMEOUT);
    }

    private DistributedLock contender(String name, Duration watchdog, Duration commandTimeout) {
        List<DistributedLock> members = new ArrayList<>();
        for (RedisServer server : servers) {
            Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri())
                    .commandTimeout(commandTimeout).watchdogTimeout(watchdog).build());
            opened.add(relock);
            members.add(relock.getLock(name));
        }
        return opened.get(opened.size() - 1).getRedLock(members.toArray(DistributedLock[]::new));
    }

    private void awaitEveryClientConnected() {
        for (Relock relock : opened) {
            Eventually.await(PROMPTLY, "client reconnected", () -> {
                try {
                    relock.getLock("probe").isLocked();
                    return true;
                } catch (RelockException e) {
                    return false;
                }
            });
        }
    }

    @Test
    void acquisitionSucceedsExactlyWhenAMajorityOfMastersIsUp() throws Exception {
        DistributedLock redLock = contender("subsets");
        long wait = 1000;
        for (int down = 0; down < 1 << NODES; down++) {
            int up = NODES - Integer.bitCount(down);
            for (int node = 0; node < NODES; node++) {
                if ((down & 1 << node) != 0) {
                    if (node % 2 == 0) {
                        servers.get(node).kill();
                    } else {
                        servers.get(node).pause();
                    }
                }
            }
            long start = System.nanoTime();
            String subset = "nodes down: " + Integer.toBinaryString(down);
            try {
                if (up >= NODES / 2 + 1) {
                    assertThat(redLock.tryLock(wait, 10_000, TimeUnit.MILLISECONDS)).as(subset).isTrue();
                    redLock.unlock();
                } else {
                    assertThatThrownBy(() -> redLock.tryLock(wait, 10_000, TimeUnit.MILLISECONDS)).as(subset)
                            .isInstanceOf(RelockException.class).hasMessageContaining("no majority");
                }
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                // The wait, plus one node timeout for the last round and the unlock's.
                assertThat(elapsed).as(subset).isLessThan(wait + 3 * COMMAND_TIMEOUT.toMillis() + 1000);
            } finally {
                healAll();
                awaitEveryClientConnected();
            }
        }
    }

    @Test
    void losingTheMajorityOfMembersIsReportedAsTheRedLockBeingLost() throws Exception {
        // A command timeout no loaded machine reaches, so that every member acquires: with the
        // tight one, a member's acquire could time out and be undone while the majority won.
        DistributedLock redLock = contender("majority", Clients.SHORT_WATCHDOG, PROMPTLY);
        java.util.concurrent.BlockingQueue<LockLostEvent> events = new java.util.concurrent.LinkedBlockingQueue<>();
        for (Relock member : opened) {
            member.addLockListener(events::add);
        }
        redLock.lock();
        // lock() returns once a majority said yes; the other members' answers may still be on the way.
        Eventually.await(PROMPTLY, "every member holds", () -> opened.stream().allMatch(r -> r.trackedHolds() == 1));
        servers.get(0).command("DEL", "majority");
        servers.get(1).command("DEL", "majority");
        List<LockLostEvent> seen = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            seen.add(events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS));
        }
        assertThat(seen).extracting(LockLostEvent::lockName).containsExactly("majority", "majority");
        servers.get(2).command("DEL", "majority");
        assertThat(events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).extracting(LockLostEvent::lockName)
                .isEqualTo("majority"); // the third member
        LockLostEvent whole = events.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(whole).isNotNull();
        assertThat(whole.lockName()).isEqualTo(redLock.getName()).startsWith("redlock");
        assertThat(whole.ownerThreadId()).isEqualTo(Thread.currentThread().getId());
        assertThat(events.poll()).as("told once").isNull();
        assertThatThrownBy(redLock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("2 of 5");
    }

    @Test
    void contendersNeverOverlapWhileAMasterIsRestartedAfterALease() throws Exception {
        long lease = 2000;
        int contenders = 4;
        int sections = 100;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger counter = new AtomicInteger();
        AtomicInteger unconfirmed = new AtomicInteger();
        AtomicInteger roundsLost = new AtomicInteger();
        CountDownLatch halfway = new CountDownLatch(sections / 2);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < contenders; c++) {
            DistributedLock redLock = contender("restarts");
            workers.add(Threads.run(() -> {
                // Safety is the point, not fairness: RedLock promises none, and on a loaded
                // machine one contender can lose every round for a long time, so the
                // contenders share the work and a contender that did not get it tries again.
                while (counter.get() < sections) {
                    if (!redLock.tryLock(5, lease, TimeUnit.SECONDS)) {
                        roundsLost.incrementAndGet();
                        continue;
                    }
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        int seen = counter.get();
                        Thread.yield();
                        counter.set(seen + 1);
                        inside.set(false);
                    } finally {
                        try {
                            redLock.unlock();
                        } catch (RelockConnectionException e) {
                            // Held on exactly a majority, one of them the master that just died:
                            // that member's release cannot be confirmed (its hold dies with it).
                            unconfirmed.incrementAndGet();
                        }
                    }
                    halfway.countDown();
                }
                return null;
            }));
        }
        assertThat(halfway.await(120, TimeUnit.SECONDS)).as("half the sections done").isTrue();
        RedisServer restarted = servers.get(2);
        restarted.kill();
        // Redlock's rule for masters without persistence: stay down for longer than a lease,
        // so the restarted master cannot hand out a lock that a majority still holds.
        WallClock.letTimePass(Duration.ofMillis(lease + 200));
        restarted.restart();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        assertThat(overlaps.get()).as("overlaps (%d waits ran out)", roundsLost.get()).isZero();
        // Every section counted once: an overlap would also lose an increment.
        assertThat(counter.get()).isBetween(sections, sections + contenders - 1);
        // Only a hold taken before the kill can have its release unconfirmed: at most one each.
        assertThat(unconfirmed.get()).isLessThanOrEqualTo(contenders);
    }
}
