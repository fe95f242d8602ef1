package io.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * {@code relock force-unlock} as its own process: it releases a lock held by a client that goes
 * on believing it holds it, and a waiter in another client gets the lock at once, well before
 * the holder's lease (30 s, renewed) would have run out.
 */
class ForceUnlockCliTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static Relock relock;
    private static RedissonClient redisson;
    private static ExecutorService waiters;

    @BeforeAll
    static void connect() {
        RedisServer server = redis.server();
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        redisson = Redisson.create(InspectCliTest.redissonConfig(server));
        waiters = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void close() throws InterruptedException {
        waiters.shutdownNow();
        waiters.awaitTermination(10, TimeUnit.SECONDS);
        redisson.shutdown();
        relock.close();
    }

    private static String uri() {
        return redis.server().uri();
    }

    /** Waits up to 30 s for {@code lock} in another thread, releases it, and tells whether it got it. */
    private static CompletableFuture<Boolean> waitFor(Lock lock) {
        CompletableFuture<Boolean> acquired = new CompletableFuture<>();
        waiters.execute(() -> {
            try {
                boolean got = lock.tryLock(30, TimeUnit.SECONDS);
                if (got) {
                    lock.unlock();
                }
                acquired.complete(got);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                acquired.completeExceptionally(e);
            } catch (RuntimeException e) {
                acquired.completeExceptionally(e);
            }
        });
        return acquired;
    }

    private static <T> T promptly(CompletableFuture<T> future) throws Exception {
        return future.get(Cli.PROMPTLY.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void forceUnlockWithYesReleasesARelockLockAndWakesARedissonWaiter() throws Exception {
        DistributedLock stuck = relock.getLock("stuck");
        stuck.lock();
        CompletableFuture<Boolean> waiter = waitFor(redisson.getLock("stuck"));
        Eventually.await(Cli.PROMPTLY, "Redisson subscribed", () -> relock.getLockInfo("stuck").waitingClients() == 1);

        Cli.Result result = Cli.run("force-unlock", "stuck", "--yes", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
        assertThat(result.out()).containsPattern("state +locked").contains(relock.clientId())
                .contains("Removed lock 'stuck' (reentrant, 1 holder): key 'stuck' deleted, unlock message published.")
                .doesNotContain("[y/N]");
        assertThat(promptly(waiter)).isTrue();
        assertThatThrownBy(stuck::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void forceUnlockReleasesARedissonLockAndWakesARelockWaiter() throws Exception {
        Lock theirs = redisson.getLock("legacy-stuck");
        theirs.lock();
        CompletableFuture<Boolean> waiter = waitFor(relock.getLock("legacy-stuck"));
        Eventually.await(Cli.PROMPTLY, "Relock subscribed", () -> relock.getLockInfo("legacy-stuck").waitingClients() == 1);

        Cli.Result result = Cli.run("force-unlock", "legacy-stuck", "--yes", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
        assertThat(result.out()).contains(redisson.getId()).contains("Removed lock 'legacy-stuck' (reentrant");
        assertThat(promptly(waiter)).isTrue();
        assertThatThrownBy(theirs::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void forceUnlockOfARedissonFairLockWakesTheNextWaiterInItsQueue() throws Exception {
        Lock theirs = redisson.getFairLock("fair-stuck");
        theirs.lock();
        CompletableFuture<Boolean> waiter = waitFor(redisson.getFairLock("fair-stuck"));
        Eventually.await(Cli.PROMPTLY, "the waiter queued", () -> Long.valueOf(1).equals(
                redis.server().command("LLEN", "redisson_lock_queue:{fair-stuck}")));

        Cli.Result result = Cli.run("force-unlock", "fair-stuck", "--yes", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
        assertThat(result.out()).containsPattern("type +fair")
                .containsPattern("queue +1 waiting: " + redisson.getId() + ":\\d+\n")
                .contains("Removed lock 'fair-stuck' (fair, 1 holder)");
        // Redisson's fair waiter waits on its own channel, told by name from Redisson's queue.
        assertThat(promptly(waiter)).isTrue();
        // No unlock check here: Redisson's fair unlock of a missing lock succeeds (it wakes the next waiter).
    }

    @Test
    void forceUnlockAnsweredNoRemovesNothing() {
        DistributedLock kept = relock.getLock("kept");
        kept.lock();
        try {
            Cli.Result result = Cli.run("n\n", Map.of(), "force-unlock", "kept", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.NOT_CONFIRMED);
            assertThat(result.out()).contains("Force-unlock 'kept'? [y/N]").contains("Not confirmed; nothing removed.")
                    .doesNotContain("Removed");
            assertThat(relock.getLockInfo("kept").holders()).containsKey(relock.clientId() + ":"
                    + Thread.currentThread().getId());
        } finally {
            kept.unlock();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET|cache:user:1|{\"name\":\"ada\"}", "SET|counter:9|42",
        "HSET|stats:1|views|10|likes|3", "HSET|votes:1|user:42|3",
        "HSET|uuid-looking|7ec5867c-d801-4e0e-9c2c-c485cb962d1c:1|abc", "RPUSH|jobs:1|a|b", "SADD|members:1|x",
        "ZADD|ranks:1|1|x", "XADD|events:1|1-1|type|created"})
    void forceUnlockOfUserDataExitsWith6AndLeavesItByteForByte(String write) {
        String[] command = write.split("\\|");
        String key = command[1];
        redis.server().command(command);
        String before = digest(key);

        Cli.Result result = Cli.run("force-unlock", key, "--yes", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.NOT_A_LOCK);
        assertThat(result.err()).contains("is a Redis").contains("that is not a lock; nothing removed");
        assertThat(digest(key)).isEqualTo(before);
    }

    /** The SHA-1 of the key's DUMP, computed on the server so that no byte is decoded on the way. */
    private static String digest(String key) {
        Object digest = redis.server().command("EVAL", "local d = redis.call('dump', KEYS[1]) "
                + "if not d then return false end return redis.sha1hex(d)", "1", key);
        assertThat(digest).as("%s exists", key).isNotNull();
        return (String) digest;
    }

    @Test
    void forceUnlockRemovesNothingThatIsNotAHeldLock() {
        redis.server().command("HSET", "settings", "colour", "blue");

        Cli.Result notALock = Cli.run("force-unlock", "settings", "--yes", "--redis", uri());
        Cli.Result free = Cli.run("force-unlock", "nobody-holds-this", "--yes", "--redis", uri());

        assertThat(notALock.exitCode()).as(notALock.toString()).isEqualTo(Main.NOT_A_LOCK);
        assertThat(notALock.err()).contains("'settings' is a Redis hash that is not a lock; nothing removed");
        assertThat(redis.server().command("HGET", "settings", "colour")).isEqualTo("blue");
        assertThat(free.exitCode()).as(free.toString()).isEqualTo(Main.FREE);
        assertThat(free.out()).contains("Nothing to remove: lock 'nobody-holds-this' is free.");
    }
}
