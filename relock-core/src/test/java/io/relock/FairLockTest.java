package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The contract suite on {@link Relock#getFairLock}, plus FIFO order, dead waiters and cost. */
class FairLockTest extends LockTypeContractTest {

    FairLockTest() {
        super(LockType.FAIR);
    }

    private Relock client(Duration threadWaitTime) {
        Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri())
                .commandTimeout(Clients.COMMAND_TIMEOUT).threadWaitTime(threadWaitTime).build());
        opened.add(relock);
        return relock;
    }

    private final List<Relock> opened = new ArrayList<>();

    @org.junit.jupiter.api.AfterEach
    void closeOwnClients() {
        opened.forEach(Relock::close);
        opened.clear();
    }

    @Test
    void twentyWaitersFromFourClientsGetTheLockInTheOrderTheyAsked() throws Exception {
        DistributedLock holder = newLock("fifo");
        holder.lock();
        List<Relock> relocks = List.of(clients.create(), clients.create(), clients.create(), clients.create());
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            int position = i;
            DistributedLock lock = relocks.get(i % 4).getFairLock("fifo");
            waiters.add(Threads.run(() -> {
                lock.lock();
                try {
                    order.add(position);
                } finally {
                    lock.unlock();
                }
                return null;
            }));
            awaitQueueLength("fifo", i + 1); // the next waiter asks only after this one queued
        }
        holder.unlock();
        for (CompletableFuture<Void> waiter : waiters) {
            waiter.get(60, TimeUnit.SECONDS);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            expected.add(i);
        }
        assertThat(order).isEqualTo(expected);
    }

    @Test
    void aWaiterKilledInTheMiddleOfTheQueueIsSkippedWithinTheThreadWaitTime() throws Exception {
        Duration threadWait = Duration.ofSeconds(1);
        DistributedLock holder = client(threadWait).getFairLock("dead-waiter");
        holder.lock();
        CompletableFuture<Boolean> first = Threads.call(() -> client(threadWait).getFairLock("dead-waiter")
                .tryLock(30, 100, TimeUnit.SECONDS));
        awaitQueueLength("dead-waiter", 1);
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "dead-waiter", "30000", "fair",
                Long.toString(threadWait.toMillis()))) {
            awaitQueueLength("dead-waiter", 2); // the child is queued second
            DistributedLock lastLock = client(threadWait).getFairLock("dead-waiter");
            CompletableFuture<Boolean> last = Threads.call(() -> {
                boolean acquired = lastLock.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    lastLock.unlock();
                }
                return acquired;
            });
            awaitQueueLength("dead-waiter", 3);
            child.kill();
            holder.unlock();
            assertThat(first.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            client(threadWait).getFairLock("dead-waiter").forceUnlock();
            long start = System.nanoTime();
            assertThat(last.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // The dead waiter's deadline (1 s) plus one heartbeat of the live one, with margin.
            assertThat(waited).isLessThan(threadWait.toMillis() * 3 + 2000);
        }
    }

    @Test
    void aWaiterThatTimesOutLeavesNoQueueOrDeadlineEntry() throws Exception {
        DistributedLock holder = newLock("gave-up");
        holder.lock();
        DistributedLock other = newLock("gave-up");
        assertThat(Threads.call(() -> other.tryLock(300, TimeUnit.MILLISECONDS)).get()).isFalse();
        assertThat(server.command("EXISTS", "{gave-up}:queue", "{gave-up}:timeouts")).isEqualTo(0L);
        holder.unlock();
    }

    @Test
    void deadlinesAreOnTheServersClock() throws Exception {
        DistributedLock holder = newLock("server-clock");
        holder.lock();
        CompletableFuture<Boolean> waiter = Threads.call(() -> newLock("server-clock").tryLock(30, TimeUnit.SECONDS));
        awaitQueueLength("server-clock", 1);
        @SuppressWarnings("unchecked")
        List<Object> withScores = (List<Object>) server.command("ZRANGE", "{server-clock}:timeouts", "0", "0", "WITHSCORES");
        @SuppressWarnings("unchecked")
        List<Object> time = (List<Object>) server.command("TIME");
        long serverNow = Long.parseLong((String) time.get(0)) * 1000;
        long deadline = (long) Double.parseDouble((String) withScores.get(1));
        assertThat(deadline - serverNow).isBetween(0L, RelockConfig.DEFAULT_THREAD_WAIT_TIME.toMillis() + 1000);
        holder.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void theCostOfAHandOffDoesNotGrowWithTheQueue() throws Exception {
        long one = commandsPerHandOff(1);
        long ten = commandsPerHandOff(10);
        long hundred = commandsPerHandOff(100);
        System.out.printf("fair lock: Redis commands per hand-off with 1/10/100 waiters: %d / %d / %d%n",
                one, ten, hundred);
        assertThat(hundred).isLessThanOrEqualTo(one + 2);
        assertThat(ten).isLessThanOrEqualTo(one + 2);
    }

    /** Commands Redis ran (inside scripts too) per acquisition while {@code waiters} queue. */
    private long commandsPerHandOff(int waiters) throws Exception {
        String name = "cost-" + waiters;
        Relock relock = client(Duration.ofSeconds(60)); // no heartbeats during the measurement
        DistributedLock holder = relock.getFairLock(name);
        holder.lock();
        List<CompletableFuture<Void>> queued = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            DistributedLock lock = relock.getFairLock(name);
            queued.add(Threads.run(() -> {
                lock.lock();
                lock.unlock();
                return null;
            }));
        }
        awaitQueueLength(name, waiters);
        server.command("CONFIG", "RESETSTAT");
        holder.unlock();
        for (CompletableFuture<Void> waiter : queued) {
            waiter.get(60, TimeUnit.SECONDS);
        }
        long calls = server.info("commandstats").lines().filter(line -> line.startsWith("cmdstat_"))
                .filter(line -> !line.startsWith("cmdstat_info:") && !line.startsWith("cmdstat_config:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
        return Math.round((double) calls / waiters);
    }
}
