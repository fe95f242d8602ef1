package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What must hold whatever names users choose and whatever happens to the connections: distinct
 * names never share a lock, a dropped pub/sub connection costs no acquire, a lost hold is
 * reported as lost however late the unlock comes, and a server that may evict lock keys is
 * called out at {@code create}.
 */
class TrustTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    @Test
    void aFairLockIsFreeWhileTheLockNamedWithItsHashTagHasAWaiter() throws Exception {
        Relock holder = clients.create();
        DistributedLock tagged = holder.getFairLock("{x}");
        tagged.lock();
        DistributedLock taggedWaiter = clients.create().getFairLock("{x}");
        CompletableFuture<Boolean> waiter = Threads.call(() -> {
            boolean acquired = taggedWaiter.tryLock(30, TimeUnit.SECONDS);
            if (acquired) {
                taggedWaiter.unlock();
            }
            return acquired;
        });
        Eventually.await(PROMPTLY, "the waiter of {x} is queued", () -> !queues().isEmpty());

        DistributedLock plain = clients.create().getFairLock("x");
        assertThat(plain.tryLock()).as("x is another lock, with another queue").isTrue();
        plain.unlock();

        tagged.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    /** The queue keys on the server (a list each). */
    private List<Object> queues() {
        List<Object> lists = new ArrayList<>();
        for (Object key : (List<?>) server.command("KEYS", "*")) {
            if ("list".equals(server.command("TYPE", String.valueOf(key)))) {
                lists.add(key);
            }
        }
        return lists;
    }

    @Test
    void fencingTokensOfANameAndOfItsHashTaggedFormCountSeparately() {
        Relock relock = clients.create();
        FencedLock plain = relock.getFencedLock("y");
        FencedLock tagged = relock.getFencedLock("{y}");
        assertThat(plain.lockAndGetToken()).isEqualTo(1);
        plain.unlock();
        assertThat(tagged.lockAndGetToken()).as("its own token sequence").isEqualTo(1);
        tagged.unlock();
        assertThat(plain.lockAndGetToken()).isEqualTo(2);
        plain.unlock();
    }

    @Test
    void namesThatAreNotWellFormedUtf16AreRejected() {
        Relock relock = clients.create();
        assertThatThrownBy(() -> relock.getLock("order:\uD800")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name").hasMessageContaining("U+D800");
        assertThatThrownBy(() -> relock.getFairLock("\uDC00x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> relock.getReadWriteLock("a\uDBFF")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> relock.getLockInfo("\uD800")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RelockConfig.builder().keyPrefix("p\uDC00")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix");
        // A well-formed pair (an emoji) is a fine name, and a different lock from its neighbours.
        DistributedLock emoji = relock.getLock("order:\uD83D\uDE00");
        emoji.lock();
        assertThat(relock.getLock("order:?").isLocked()).isFalse();
        emoji.unlock();
    }

    @Test
    void droppingOnlyThePubSubConnectionFailsNoAcquire() throws Exception {
        Relock relock = clients.create();
        int names = 4;
        List<AtomicBoolean> inside = new ArrayList<>();
        for (int n = 0; n < names; n++) {
            inside.add(new AtomicBoolean());
        }
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger cycles = new AtomicInteger();
        int threads = 8;
        int perThread = 300;
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            // Two threads per name: acquires in flight all the time, and waiters on pub/sub.
            int n = t % names;
            workers.add(Threads.run(() -> {
                DistributedLock lock = relock.getLock("busy:" + n);
                for (int i = 0; i < perThread; i++) {
                    lock.lock();
                    try {
                        if (!inside.get(n).compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        inside.get(n).set(false);
                        cycles.incrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        // Drops while the threads work, each once the client has subscribed again.
        int total = threads * perThread;
        int kills = 0;
        while (kills < 10 && cycles.get() < total) {
            Eventually.await(PROMPTLY, "a pub/sub client connected", () -> pubSubClients() > 0 || cycles.get() == total);
            server.command("CLIENT", "KILL", "TYPE", "pubsub");
            kills++;
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        assertThat(kills).as("drops while the threads worked").isPositive();
        assertThat(cycles).hasValue(total);
        assertThat(overlaps).hasValue(0);
        for (int n = 0; n < names; n++) {
            assertThat(relock.getLock("busy:" + n).isLocked()).isFalse();
        }
    }

    private long pubSubClients() {
        return String.valueOf(server.command("CLIENT", "LIST", "TYPE", "pubsub")).lines()
                .filter(line -> line.contains("sub=") && !line.contains("sub=0")).count();
    }

    @Test
    void anUnlockLongAfterTheHoldWasLostStillSaysLost() throws Exception {
        // Nothing stays held here that a late tick could lose: a quick watchdog only lets the
        // timeouts below pass sooner.
        Duration watchdog = Duration.ofMillis(300);
        Relock relock = clients.create(watchdog);
        BlockingQueue<LockLostEvent> lost = new LinkedBlockingQueue<>();
        relock.addLockListener(lost::add);
        BlockingQueue<WatchdogTickEvent> ticks = new LinkedBlockingQueue<>();
        relock.addObserver(new LockObserver() {
            @Override
            public void onWatchdogTick(WatchdogTickEvent tick) {
                ticks.add(tick);
            }
        });
        DistributedLock lock = relock.getLock("gone");
        lock.lock();
        server.command("DEL", "gone");
        assertThat(lost.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isNotNull();

        // Several watchdog timeouts: a lost hold is kept until its owner unlocks. Then a tick
        // that began after them: ticks report once done, and the next one begins after that.
        WallClock.letTimePass(watchdog.multipliedBy(3));
        ticks.clear();
        assertThat(ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("a tick").isNotNull();
        assertThat(ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("a tick begun after").isNotNull();

        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("lost");
        assertThatThrownBy(lock::unlock).as("reported once; then simply not held")
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("not held");
    }

    @Test
    void createWarnsWhenTheServerMayEvictLockKeys() {
        try (RedisServer evicting = RedisServer.builder().arg("maxmemory-policy", "volatile-lru").start()) {
            String log = stderrOf(() -> Relock.create(RelockConfig.builder().singleServer(evicting.uri()).build())
                    .close());
            assertThat(log).contains("WARN").contains("maxmemory-policy 'volatile-lru'").contains("noeviction");
        }
        String quiet = stderrOf(() -> Relock.create(RelockConfig.builder().singleServer(server.uri()).build()).close());
        assertThat(quiet).as("noeviction, the default, is quiet").doesNotContain("maxmemory-policy");
    }

    /** What the logger (slf4j-simple, writing to System.err) printed while {@code action} ran. */
    private static String stderrOf(Runnable action) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
