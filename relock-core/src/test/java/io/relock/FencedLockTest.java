package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.relock.testkit.ChildJvm;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The contract suite on {@link Relock#getFencedLock(String)}, plus its tokens. */
class FencedLockTest extends LockTypeContractTest {

    FencedLockTest() {
        super(LockType.FENCED);
    }

    @Test
    void tokensGrowStrictlyAcrossAThousandHandOffsBetweenFourClients() throws Exception {
        List<Long> tokensInHoldOrder = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            FencedLock lock = clients.create().getFencedLock("fenced");
            for (int t = 0; t < 2; t++) {
                workers.add(Threads.run(() -> {
                    gate.await();
                    for (int i = 0; i < 125; i++) {
                        long token = lock.lockAndGetToken();
                        try {
                            tokensInHoldOrder.add(token); // critical sections are serial: list order = hold order
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        assertThat(tokensInHoldOrder).hasSize(1000).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void reEntryKeepsTheHoldersTokenAndTheNextHolderGetsAHigherOne() throws Exception {
        FencedLock lock = clients.create().getFencedLock("token");
        assertThat(lock.getToken()).isNull();
        long first = lock.lockAndGetToken();
        assertThat(lock.tryLockAndGetToken()).isEqualTo(first);
        assertThat(lock.getToken()).isEqualTo(first);
        FencedLock other = clients.create().getFencedLock("token");
        assertThat(other.tryLockAndGetToken()).isNull();
        assertThat(other.tryLockAndGetToken(50, TimeUnit.MILLISECONDS)).isNull();
        lock.unlock();
        lock.unlock();
        Long second = other.tryLockAndGetToken(0, 10, TimeUnit.SECONDS);
        assertThat(second).isGreaterThan(first);
        assertThat(other.getToken()).isEqualTo(second);
        other.unlock();
        assertThat(lock.getToken()).isNull();
    }

    @Test
    void aHolderPausedPastItsLeaseHasItsLateWriteRejected() throws Exception {
        try (ChildJvm child = ChildJvm.start(FencedHolderMain.class, server.uri(), "paused",
                Long.toString(Clients.SHORT_WATCHDOG.toMillis()))) {
            long childToken = Long.parseLong(child.awaitLine("TOKEN", LockContractTest.CHILD_START).substring(6));
            child.pause();
            try {
                FencedLock lock = clients.create().getFencedLock("paused");
                // The paused child cannot renew: its lease runs out and the lock passes on.
                Long token = lock.tryLockAndGetToken(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(token).isGreaterThan(childToken);
                assertThat(fencedWrite(token, "parent")).isEqualTo(1);
            } finally {
                child.resume();
            }
            child.send("write");
            assertThat(child.awaitLine("WRITE", PROMPTLY)).isEqualTo("WRITE rejected");
            assertThat(server.command("LRANGE", "resource:writes", "0", "-1")).isEqualTo(List.of("parent"));
        }
    }

    private long fencedWrite(long token, String writer) {
        RedisClient redis = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> connection = redis.connect()) {
            Long accepted = connection.sync().eval(FencedHolderMain.FENCED_WRITE, ScriptOutputType.INTEGER,
                    new String[] {"resource:highest-token", "resource:writes"}, Long.toString(token), writer);
            return accepted;
        } finally {
            redis.shutdown();
        }
    }
}
