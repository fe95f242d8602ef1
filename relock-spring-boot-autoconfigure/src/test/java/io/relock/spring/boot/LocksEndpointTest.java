package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import tools.jackson.databind.JsonNode;

import io.relock.DistributedLock;
import io.relock.LockLostEvent;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * The {@code locks} endpoint over real HTTP, in an application whose endpoint access is
 * unrestricted, against a real Redis; a second {@link Relock} client plays another instance.
 */
@ExtendWith(OutputCaptureExtension.class)
class LocksEndpointTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static ActuatorApp app;
    private static Relock relock;
    private Relock other;

    @BeforeAll
    static void start() {
        RedisServer server = redis.server();
        app = ActuatorApp.start(server, "management.endpoint.locks.access=unrestricted",
                "relock.watchdog-timeout=900ms");
        relock = app.bean(Relock.class);
    }

    /** Another instance's client, made after the extension emptied Redis, so its registry entry is there. */
    @BeforeEach
    void startOther() {
        other = Relock.create(RelockConfig.builder().singleServer(redis.server().uri()).build());
    }

    @AfterEach
    void stopOther() {
        other.close();
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void theListShowsThisClientAndWhatItHoldsWithOwnerThreadAndType() {
        DistributedLock reentrant = relock.getLock("order:42");
        DistributedLock fair = relock.getFairLock("queue:7");
        reentrant.lock();
        reentrant.lock();
        fair.lock();
        try {
            ActuatorApp.Response response = app.get("/actuator/locks");
            assertThat(response.status()).isEqualTo(200);
            JsonNode json = response.json();
            assertThat(json.get("clientId").asString()).isEqualTo(relock.clientId());
            assertThat(json.get("topology").asString()).isEqualTo("SINGLE_SERVER");
            assertThat(json.get("keyPrefix").asString()).isEmpty();
            assertThat(json.get("watchdogTimeoutMillis").asLong()).isEqualTo(900);
            assertThat(json.get("client").get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
            assertThat(json.get("client").get("host").asString()).isEqualTo(relock.clientInfo().host());
            JsonNode held = json.get("heldLocks");
            assertThat(held.size()).isEqualTo(2);
            JsonNode order = byName(held, "order:42");
            assertThat(order.get("type").asString()).isEqualTo("reentrant");
            assertThat(order.get("holdCount").asInt()).isEqualTo(2);
            assertThat(order.get("ownerThreadName").asString()).isEqualTo(Thread.currentThread().getName());
            assertThat(order.get("ownerId").asLong()).isEqualTo(Thread.currentThread().getId());
            assertThat(order.get("watchdog").asBoolean()).isTrue();
            assertThat(byName(held, "queue:7").get("type").asString()).isEqualTo("fair");
        } finally {
            fair.unlock();
            reentrant.unlock();
            reentrant.unlock();
        }
        assertThat(app.get("/actuator/locks").json().get("heldLocks").size()).isZero();
    }

    private static JsonNode byName(JsonNode held, String name) {
        for (JsonNode lock : held) {
            if (lock.get("name").asString().equals(name)) {
                return lock;
            }
        }
        throw new AssertionError(name + " is not among " + held);
    }

    @Test
    void aLockHeldByAnotherClientShowsItsHolderWithHostPidAndHoldCount() {
        DistributedLock lock = other.getLock("orders/42");
        lock.lock();
        lock.lock();
        try {
            ActuatorApp.Response response = app.get(ActuatorApp.lockPath("orders/42"));
            assertThat(response.status()).isEqualTo(200);
            JsonNode json = response.json();
            assertThat(json.get("name").asString()).isEqualTo("orders/42");
            assertThat(json.get("type").asString()).as("told from the data").isEqualTo("reentrant");
            assertThat(json.get("leaseLeftMillis").asLong()).isBetween(1L, 30_000L);
            JsonNode holder = json.get("holders").get(0);
            assertThat(json.get("holders").size()).isEqualTo(1);
            assertThat(holder.get("holder").asString())
                    .isEqualTo(other.clientId() + ":" + Thread.currentThread().getId());
            assertThat(holder.get("clientId").asString()).isEqualTo(other.clientId());
            assertThat(holder.get("threadId").asLong()).isEqualTo(Thread.currentThread().getId());
            assertThat(holder.get("holdCount").asLong()).isEqualTo(2);
            assertThat(holder.get("thisClient").asBoolean()).isFalse();
            assertThat(holder.get("host").asString()).isEqualTo(other.clientInfo().host());
            assertThat(holder.get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
            assertThat(holder.get("clientStartedAt").asString()).isEqualTo(other.clientInfo().startedAt().toString());
        } finally {
            lock.unlock();
            lock.unlock();
        }
    }

    @Test
    void aLockHeldByThisClientShowsTheThreadNameAndType() {
        DistributedLock lock = relock.getReadWriteLock("report:1").writeLock();
        lock.lock();
        try {
            JsonNode json = app.get(ActuatorApp.lockPath("report:1")).json();
            assertThat(json.get("type").asString()).isEqualTo("write");
            JsonNode holder = json.get("holders").get(0);
            assertThat(holder.get("thisClient").asBoolean()).isTrue();
            assertThat(holder.get("threadName").asString()).isEqualTo(Thread.currentThread().getName());
        } finally {
            lock.unlock();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "orders/42", "a/b/c/d", "tenant:7:order:42", "with space", "zürich/日本/ключ",
            "percent%41sign", "plus+sign" })
    void namesWithSlashesColonsSpacesAndUnicodeAreAddressed(String name) {
        DistributedLock lock = other.getLock(name);
        lock.lock();
        try {
            ActuatorApp.Response response = app.get(ActuatorApp.lockPath(name));
            assertThat(response.status()).as(response.body()).isEqualTo(200);
            assertThat(response.json().get("name").asString()).isEqualTo(name);
            assertThat(response.json().get("holders").get(0).get("clientId").asString()).isEqualTo(other.clientId());
        } finally {
            lock.unlock();
        }
        assertThat(app.get(ActuatorApp.lockPath(name)).status()).isEqualTo(404);
    }

    @Test
    void aFreeLockIsNotFoundForReadAndForceUnlockWithABodySayingItIsFree() {
        ActuatorApp.Response read = app.get(ActuatorApp.lockPath("nobody/holds/this"));
        assertThat(read.status()).isEqualTo(404);
        assertThat(read.json().get("name").asString()).isEqualTo("nobody/holds/this");
        assertThat(read.json().get("state").asString()).isEqualTo("FREE");
        assertThat(read.json().get("message").asString()).isEqualTo("lock 'nobody/holds/this' is free: nobody holds it");

        ActuatorApp.Response delete = app.delete(ActuatorApp.lockPath("nobody/holds/this"), "alice");
        assertThat(delete.status()).isEqualTo(404);
        assertThat(delete.json().get("state").asString()).isEqualTo("FREE");
        assertThat(delete.json().get("message").asString()).isEqualTo("nothing to remove: lock 'nobody/holds/this' is free");
    }

    @Test
    void aHeldLockSaysItIsLocked() {
        DistributedLock lock = other.getLock("held/1");
        lock.lock();
        try {
            ActuatorApp.Response read = app.get(ActuatorApp.lockPath("held/1"));
            assertThat(read.status()).as(read.body()).isEqualTo(200);
            assertThat(read.json().get("state").asString()).isEqualTo("LOCKED");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void forceUnlockRemovesTheLockLetsAWaiterInAndLogsWhoDidIt(CapturedOutput output) throws Exception {
        String name = "order:9";
        DistributedLock held = other.getLock(name);
        held.lock();
        ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        try {
            DistributedLock waiterLock = relock.getLock(name);
            Future<Boolean> waiter = waiterThread.submit(() -> {
                boolean acquired = waiterLock.tryLock(30, TimeUnit.SECONDS);
                if (acquired) {
                    waiterLock.unlock();
                }
                return acquired;
            });
            Eventually.await(Duration.ofSeconds(10), "the waiter is subscribed",
                    () -> relock.getLockInfo(name).waitingClients() == 1);

            ActuatorApp.Response response = app.delete(ActuatorApp.lockPath(name), "alice");

            assertThat(response.status()).as(response.body()).isEqualTo(200);
            JsonNode removed = response.json();
            assertThat(removed.get("name").asString()).isEqualTo(name);
            assertThat(removed.get("holders").get(0).get("clientId").asString()).isEqualTo(other.clientId());
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(output.getOut()).contains("Force-unlocked lock 'order:9'", other.clientId(),
                    "by alice from 127.0.0.1");
        } finally {
            waiterThread.shutdownNow();
            assertThat(waiterThread.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(held::unlock).isInstanceOf(IllegalMonitorStateException.class);
        }
        assertThat(redis.server().command("EXISTS", name)).isEqualTo(0L);
    }

    @Test
    void anAnonymousForceUnlockIsLoggedAsAnonymous(CapturedOutput output) {
        DistributedLock held = other.getFencedLock("fenced/1");
        held.lock();
        try {
            assertThat(app.delete(ActuatorApp.lockPath("fenced/1"), null).status()).isEqualTo(200);
            assertThat(redis.server().command("EXISTS", "fenced/1")).isEqualTo(0L);
            assertThat(output.getOut()).contains("Force-unlocked lock 'fenced/1'", "by anonymous from 127.0.0.1");
        } finally {
            assertThatThrownBy(held::unlock).isInstanceOf(IllegalMonitorStateException.class);
        }
    }

    @Test
    void aForceUnlockOfAnotherClientsFairLockWakesItsNextWaiterAtOnce() throws Exception {
        Relock waiterClient = Relock.create(RelockConfig.builder().singleServer(redis.server().uri()).build());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            other.getFairLock("fair/1").lock();
            Future<Boolean> next = pool.submit(() -> waiterClient.getFairLock("fair/1").tryLock(10, TimeUnit.SECONDS));
            Eventually.await(Duration.ofSeconds(10), "the waiter queued",
                    () -> (Long) redis.server().command("LLEN", "{fair/1}:queue") == 1);
            ActuatorApp.Response response = app.delete(ActuatorApp.lockPath("fair/1"), null);
            assertThat(response.status()).as(response.body()).isEqualTo(200);
            assertThat(response.json().get("type").asString()).isEqualTo("fair");
            // The holder's lease is 30 s: only the fair lock's own release wakes the waiter sooner.
            assertThat(next.get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
            waiterClient.close();
        }
    }

    @Test
    void aKeyThatHoldsNoLockIsNotFoundForReadAndAConflictForForceUnlockAndNotRemoved() {
        redis.server().command("HSET", "profile/7", "name", "ada", "visits", "3");
        ActuatorApp.Response read = app.get(ActuatorApp.lockPath("profile/7"));
        assertThat(read.status()).isEqualTo(404);
        assertThat(read.json().get("name").asString()).isEqualTo("profile/7");
        assertThat(read.json().get("state").asString()).isEqualTo("NOT_A_LOCK");
        assertThat(read.json().get("message").asString()).isEqualTo("'profile/7' is not a lock: its key holds other data");

        ActuatorApp.Response response = app.delete(ActuatorApp.lockPath("profile/7"), null);
        assertThat(response.status()).as(response.body()).isEqualTo(409);
        assertThat(response.json().get("state").asString()).isEqualTo("NOT_A_LOCK");
        assertThat(response.json().get("message").asString())
                .isEqualTo("'profile/7' is not a lock: its key holds other data; nothing was changed");
        assertThat(redis.server().command("HGET", "profile/7", "name")).isEqualTo("ada");
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET|cache:user:1|{\"name\":\"ada\"}", "SET|counter:9|42",
        "HSET|stats/1|views|10|likes|3", "HSET|votes/1|user:42|3",
        "HSET|uuid-looking|7ec5867c-d801-4e0e-9c2c-c485cb962d1c:1|abc", "RPUSH|jobs/1|a|b", "SADD|members/1|x",
        "ZADD|ranks/1|1|x", "XADD|events/1|1-1|type|created"})
    void userDataOfEveryTypeIsNotALockAndLeftByteForByte(String write) {
        String[] command = write.split("\\|");
        String key = command[1];
        redis.server().command(command);
        String before = digest(key);

        ActuatorApp.Response read = app.get(ActuatorApp.lockPath(key));
        assertThat(read.status()).isEqualTo(404);
        assertThat(read.json().get("state").asString()).isEqualTo("NOT_A_LOCK");
        ActuatorApp.Response response = app.delete(ActuatorApp.lockPath(key), "alice");

        assertThat(response.status()).as(response.body()).isEqualTo(409);
        assertThat(response.json().get("state").asString()).isEqualTo("NOT_A_LOCK");
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
    void aForceUnlockIsListedAsTheCauseOfTheHoldersLoss() {
        DistributedLock lock = relock.getLock("seized/1");
        lock.lock();
        try {
            assertThat(app.delete(ActuatorApp.lockPath("seized/1"), "alice").status()).isEqualTo(200);
            Eventually.await(Duration.ofSeconds(10), "the loss is listed", () -> {
                JsonNode losses = app.get("/actuator/locks").json().get("recentLosses");
                return losses.size() > 0 && losses.get(0).get("lockName").asString().equals("seized/1");
            });
            JsonNode loss = app.get("/actuator/locks").json().get("recentLosses").get(0);
            assertThat(loss.get("cause").asString()).contains("force-unlocked");
        } finally {
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("force-unlocked");
        }
    }

    @Test
    void aForceUnlockOfALockThisClientHoldsUsesItsTypeAndTheHolderLearnsItLost() {
        DistributedLock lock = relock.getReadWriteLock("report:2").readLock();
        lock.lock();
        try {
            ActuatorApp.Response response = app.delete(ActuatorApp.lockPath("report:2"), "bob");
            assertThat(response.status()).as(response.body()).isEqualTo(200);
            assertThat(response.json().get("type").asString()).isEqualTo("read");
            assertThat(redis.server().command("EXISTS", "report:2")).isEqualTo(0L);
        } finally {
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        }
    }

    @Test
    void aLostLeaseIsListedWithOwnerAndCause() {
        DistributedLock lock = relock.getLock("lease:1");
        lock.lock();
        try {
            assertThat(redis.server().command("DEL", "lease:1")).isEqualTo(1L);
            String owner = relock.clientId() + ":" + Thread.currentThread().getId();
            Eventually.await(Duration.ofSeconds(10), "the loss is listed", () -> {
                JsonNode losses = app.get("/actuator/locks").json().get("recentLosses");
                return losses.size() > 0 && losses.get(0).get("lockName").asString().equals("lease:1");
            });
            JsonNode loss = app.get("/actuator/locks").json().get("recentLosses").get(0);
            assertThat(loss.get("owner").asString()).isEqualTo(owner);
            assertThat(loss.get("ownerId").asLong()).isEqualTo(Thread.currentThread().getId());
            assertThat(loss.get("cause").asString()).isEqualTo("the lock was gone from Redis at renewal");
            assertThat(loss.get("time").asString()).isNotBlank();
        } finally {
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        }
    }

    @Test
    void theLossHistoryKeepsTheLastTwenty() {
        try (LockLosses losses = LockLosses.register(other, java.time.Clock.systemUTC())) {
            for (int i = 0; i < LockLosses.CAPACITY + 5; i++) {
                losses.onLockLost(new LockLostEvent("ring:" + i, 1, new IllegalStateException("boom " + i)));
            }
            assertThat(losses.recent()).hasSize(LockLosses.CAPACITY);
            assertThat(losses.recent().get(0).lockName()).isEqualTo("ring:" + (LockLosses.CAPACITY + 4));
            assertThat(losses.recent().get(0).cause()).isEqualTo("boom " + (LockLosses.CAPACITY + 4));
            assertThat(losses.recent().get(0).owner()).isEqualTo(other.clientId() + ":1");
            assertThat(losses.recent().get(LockLosses.CAPACITY - 1).lockName()).isEqualTo("ring:5");
        }
    }
}
