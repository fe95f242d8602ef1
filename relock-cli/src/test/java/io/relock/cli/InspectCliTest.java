package io.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * {@code relock inspect} and {@code relock list}, each run as its own process, on locks that a
 * Relock client and a Redisson client in this JVM hold.
 */
class InspectCliTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static Relock relock;
    private static RedissonClient redisson;

    @BeforeAll
    static void connect() {
        RedisServer server = redis.server();
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        redisson = Redisson.create(redissonConfig(server));
    }

    static Config redissonConfig(RedisServer server) {
        Config config = new Config();
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
        return config;
    }

    @AfterAll
    static void close() {
        redisson.shutdown();
        relock.close();
    }

    private static String uri() {
        return redis.server().uri();
    }

    @Test
    void inspectShowsARelockLocksHolderHoldCountAndLease() {
        // Its own client: the extension empties Redis between tests, and with it the shared
        // client's registry entry (back at its next watchdog tick, 10 s later).
        try (Relock holder = Relock.create(RelockConfig.builder().singleServer(uri()).build())) {
            DistributedLock lock = holder.getLock("order:42");
            lock.lock();
            lock.lock();
            Cli.Result result = Cli.run("inspect", "order:42", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
            assertThat(result.out())
                    .containsPattern("state +locked")
                    .containsPattern("type +reentrant")
                    .containsPattern("CLIENT ID +HOST +PID +THREAD +HOLDS")
                    .containsPattern(holder.clientId() + " +" + Pattern.quote(holder.clientInfo().host()) + " +"
                            + ProcessHandle.current().pid() + " +" + Thread.currentThread().getId() + " +2\\n")
                    .containsPattern("lease left +\\d+\\.\\d{3} s")
                    .containsPattern("waiting +0 clients subscribed to redisson_lock__channel:\\{order:42}");
            lock.unlock();
            lock.unlock();
        }
    }

    @Test
    void inspectOfALockWithAQueuedWaiterShowsOnlyItsHolder() throws Exception {
        try (Relock holder = Relock.create(RelockConfig.builder().singleServer(uri()).build());
                Relock waiter = Relock.create(RelockConfig.builder().singleServer(uri()).build())) {
            DistributedLock lock = holder.getLock("busy:7");
            lock.lock();
            DistributedLock theirs = waiter.getLock("busy:7");
            CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    boolean acquired = theirs.tryLock(30, TimeUnit.SECONDS);
                    if (acquired) {
                        theirs.unlock();
                    }
                    return acquired;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }, runnable -> new Thread(runnable).start());
            Eventually.await(Duration.ofSeconds(10), "the waiter's note in the lock hash",
                    () -> Long.valueOf(1).equals(redis.server().command("HEXISTS", "busy:7", "relock:queued")));

            Cli.Result result = Cli.run("inspect", "busy:7", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
            assertThat(result.out()).containsPattern("type +reentrant").contains(holder.clientId())
                    .doesNotContain("relock:");
            lock.unlock();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void inspectJsonOfARedissonLockNamesRedissonsClientAndThread() {
        Lock theirs = redisson.getLock("legacy-job");
        theirs.lock();
        try {
            Cli.Result result = Cli.run("inspect", "legacy-job", "--json", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
            assertThat(result.out().strip())
                    .startsWith("{\"name\":\"legacy-job\",\"key\":\"legacy-job\",\"locked\":true,\"type\":\"reentrant\"")
                    .contains("\"clientId\":\"" + redisson.getId() + "\",\"threadId\":" + Thread.currentThread().getId()
                            + ",\"holdCount\":1,\"host\":null,\"pid\":null")
                    .containsPattern("\"leaseMillis\":\\d+,\"waitingClients\":0")
                    .endsWith("}");
        } finally {
            theirs.unlock();
        }
    }

    @Test
    void inspectShowsTheFencingTokenOfAFencedLock() {
        long token = relock.getFencedLock("account:42").lockAndGetToken();
        try {
            Cli.Result result = Cli.run("inspect", "account:42", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
            assertThat(result.out()).containsPattern("type +fenced").containsPattern("fencing token +" + token + "\\n");
        } finally {
            relock.getFencedLock("account:42").unlock();
        }
    }

    @Test
    void inspectOfAnUnrelatedKeySaysItIsNoLockAndExitsWith6() {
        redis.server().command("HSET", "user:1", "name", "Ada");

        Cli.Result result = Cli.run("inspect", "user:1", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.NOT_A_LOCK);
        assertThat(result.out()).contains("not a lock: a Redis hash");
    }

    @Test
    void inspectWithAKeyPrefixFindsTheLockUnderThePrefix() throws Exception {
        try (Relock prefixed = Relock.create(RelockConfig.builder().singleServer(uri()).keyPrefix("app:locks:")
                .build())) {
            DistributedLock lock = prefixed.getLock("nightly");
            lock.lock();
            try {
                Cli.Result result = Cli.run("inspect", "nightly", "--key-prefix", "app:locks:", "--redis", uri());

                assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
                assertThat(result.out()).containsPattern("lock +nightly\\n").containsPattern("key +app:locks:nightly\\n")
                        .contains(prefixed.clientId());
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void listShowsEveryHeldLockWithItsTypeAndSkipsOtherKeys() {
        redis.server().command("HSET", "user:2", "name", "Grace");
        redis.server().command("SET", "greeting", "hello");
        redis.server().command("RPUSH", "jobs", "a");
        // Its own client, registered after the extension emptied Redis, so that its host and pid show.
        Relock own = Relock.create(RelockConfig.builder().singleServer(uri()).build());
        DistributedLock reentrant = own.getLock("list:reentrant");
        DistributedLock simple = relock.getSimpleLock("list:simple");
        DistributedReadWriteLock relockRw = relock.getReadWriteLock("list:rw-write");
        RReadWriteLock redissonRw = redisson.getReadWriteLock("list:rw-read");
        reentrant.lock();
        simple.lock();
        relockRw.writeLock().lock();
        redissonRw.readLock().lock();
        try {
            Cli.Result result = Cli.run("list", "list:*", "--redis", uri());

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
            assertThat(result.out())
                    .containsPattern("NAME +TYPE +LEASE LEFT +HOLDERS\\n")
                    .containsPattern("list:reentrant +reentrant +\\d+\\.\\d{3} s +" + own.clientId() + ":\\d+ \\("
                            + Pattern.quote(own.clientInfo().host()) + " pid " + own.clientInfo().pid() + "\\)\\n")
                    .containsPattern("list:simple +simple +\\d+\\.\\d{3} s +" + relock.clientId())
                    .containsPattern("list:rw-write +read-write/write +\\d+\\.\\d{3} s +" + relock.clientId())
                    .containsPattern("list:rw-read +read-write/read +\\d+\\.\\d{3} s +" + redisson.getId() + ":\\d+\\n")
                    .contains("4 locks held")
                    .doesNotContain("user:2", "greeting", "jobs", "rwlock_timeout");

            Cli.Result all = Cli.run("list", "--json", "--redis", uri());

            assertThat(all.exitCode()).as(all.toString()).isEqualTo(Main.OK);
            assertThat(all.out()).startsWith("{\"pattern\":\"*\",\"examined\":").contains("\"complete\":true")
                    .contains("\"name\":\"list:rw-read\",\"key\":\"list:rw-read\",\"locked\":true,\"type\":\"read-write\"")
                    .contains("\"host\":" + Json.write(own.clientInfo().host()) + ",\"pid\":"
                            + own.clientInfo().pid() + ",")
                    .doesNotContain("\"user:2\"", "\"greeting\"", "\"jobs\"");
        } finally {
            redissonRw.readLock().unlock();
            relockRw.writeLock().unlock();
            simple.unlock();
            reentrant.unlock();
            own.close();
        }
    }

    @Test
    void listWatchRepeatsForTheGivenIterationsAndStopsAtTheLimit() {
        for (int i = 0; i < 5; i++) {
            redis.server().command("SET", "watch:filler:" + i, "x");
        }

        Cli.Result result = Cli.run("list", "watch:*", "--watch", "0.1", "--iterations", "2", "--limit", "3",
                "--count", "1", "--redis", uri());

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(Main.OK);
        assertThat(result.out().lines().filter(line -> line.startsWith("relock list watch:* at "))).hasSize(2);
        assertThat(result.out().lines().filter(line -> line.equals(
                "0 locks held, 3 keys examined (stopped at --limit 3: there may be more)"))).hasSize(2);
    }
}
