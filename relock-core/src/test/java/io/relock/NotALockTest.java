package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisExtension;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lock tool never deletes data that no lock wrote: strings, hashes (counters too), lists,
 * sets, sorted sets and streams of an application survive {@link Relock#forceUnlock(String)} and
 * every lock type's {@link DistributedLock#forceUnlock()}, byte for byte, and
 * {@link Relock#getLockInfo(String)} calls them {@link LockInfo.Kind#NOT_A_LOCK}.
 */
class NotALockTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final String SOMEONE = UUID.randomUUID() + ":1";

    private Relock operator;

    @BeforeEach
    void connect() {
        operator = clients.create();
    }

    /** The user data under test, by name: each a key no lock wrote. */
    private Map<String, String[]> userData() {
        Map<String, String[]> data = new LinkedHashMap<>();
        data.put("cache:user:1", new String[] {"SET", "cache:user:1", "{\"name\":\"Ada\"}"});
        data.put("session:7", new String[] {"SET", "session:7", UUID.randomUUID().toString(), "PX", "600000"});
        data.put("session:8", new String[] {"SET", "session:8", SOMEONE + ":write", "PX", "600000"});
        data.put("counter", new String[] {"SET", "counter", "42"});
        data.put("persistent-token", new String[] {"SET", "persistent-token", SOMEONE});
        data.put("stats", new String[] {"HSET", "stats", "views", "10", "likes", "3"});
        data.put("votes", new String[] {"HSET", "votes", "user:42", "3"});
        data.put("uuid-field-text", new String[] {"HSET", "uuid-field-text", SOMEONE, "abc"});
        data.put("uuid-field-zero", new String[] {"HSET", "uuid-field-zero", SOMEONE, "0"});
        data.put("uuid-field-and-more", new String[] {"HSET", "uuid-field-and-more", SOMEONE, "1", "name", "x"});
        data.put("mode-only", new String[] {"HSET", "mode-only", "mode", "read"});
        data.put("odd-mode", new String[] {"HSET", "odd-mode", "mode", "fast", SOMEONE, "1"});
        data.put("jobs", new String[] {"RPUSH", "jobs", "a", "b"});
        data.put("members", new String[] {"SADD", "members", "x", SOMEONE});
        data.put("ranks", new String[] {"ZADD", "ranks", "1", SOMEONE});
        data.put("events", new String[] {"XADD", "events", "1-1", "type", "created"});
        return data;
    }

    /** Every lock type's per-call force-unlock of {@code name}, as the caller would reach it. */
    private List<Function<String, Boolean>> everyForceUnlock() {
        List<Function<String, Boolean>> calls = new ArrayList<>();
        calls.add(operator::forceUnlock);
        calls.add(name -> operator.getLock(name).forceUnlock());
        calls.add(name -> operator.getSpinLock(name).forceUnlock());
        calls.add(name -> operator.getFairLock(name).forceUnlock());
        calls.add(name -> operator.getFencedLock(name).forceUnlock());
        calls.add(name -> operator.getSimpleLock(name).forceUnlock());
        calls.add(name -> operator.getReadWriteLock(name).readLock().forceUnlock());
        calls.add(name -> operator.getReadWriteLock(name).writeLock().forceUnlock());
        calls.add(name -> operator.getMultiLock(operator.getLock(name)).forceUnlock());
        return calls;
    }

    @Test
    void userDataSurvivesEveryForceUnlockByteForByte() {
        Map<String, String[]> data = userData();
        for (String[] write : data.values()) {
            server.command(write);
        }
        for (String name : data.keySet()) {
            String before = digest(name);
            long ttl = (Long) server.command("PTTL", name);
            assertThat(operator.getLockInfo(name).kind()).as(name).isEqualTo(LockInfo.Kind.NOT_A_LOCK);
            assertThat(operator.getLockInfo(name).holders()).as(name).isEmpty();
            assertThat(operator.getLockInfo(name).remainTimeToLive()).as(name).isEqualTo(-2);
            List<Function<String, Boolean>> calls = everyForceUnlock();
            for (int i = 0; i < calls.size(); i++) {
                assertThat(calls.get(i).apply(name)).as("force-unlock #%d of %s", i, name).isFalse();
                assertThat(digest(name)).as("after force-unlock #%d of %s", i, name).isEqualTo(before);
            }
            long ttlAfter = (Long) server.command("PTTL", name);
            assertThat(ttlAfter == -1 ? ttl == -1 : ttlAfter <= ttl && ttlAfter > 0).as("the ttl of %s", name)
                    .isTrue();
        }
    }

    @Test
    void aListOrStringNamedLikeALocksSideKeyDoesNotMakeALock() {
        server.command("RPUSH", "{orders}:queue", "first", "second");
        server.command("ZADD", "{orders}:timeouts", "1", "first");
        server.command("SET", "{invoices}:token", "not a number");
        server.command("HSET", "invoices", "total", "12");
        String queue = digest("{orders}:queue");
        String token = digest("{invoices}:token");

        assertThat(operator.getLockInfo("orders").kind()).isEqualTo(LockInfo.Kind.NONE);
        assertThat(operator.getLockInfo("invoices").kind()).isEqualTo(LockInfo.Kind.NOT_A_LOCK);
        for (Function<String, Boolean> call : everyForceUnlock()) {
            assertThat(call.apply("orders")).isFalse();
            assertThat(call.apply("invoices")).isFalse();
        }
        assertThat(digest("{orders}:queue")).isEqualTo(queue);
        assertThat(digest("{invoices}:token")).isEqualTo(token);
        assertThat(server.command("HGET", "invoices", "total")).isEqualTo("12");
    }

    @Test
    void aKeyNamedLikeTheForcedNoteIsLeftAlone() {
        Relock holder = clients.create();
        holder.getLock("shelf").lock();
        server.command("HSET", "{shelf}:relock:forced", "mine", "1");
        String note = digest("{shelf}:relock:forced");

        assertThat(operator.forceUnlock("shelf")).isTrue();

        assertThat(digest("{shelf}:relock:forced")).isEqualTo(note);
        assertThat(server.command("PTTL", "{shelf}:relock:forced")).isEqualTo(-1L);
    }

    @Test
    void theForcedNoteIsNotALockAndExpires() {
        Relock holder = clients.create();
        holder.getLock("desk").lock();

        assertThat(operator.forceUnlock("desk")).isTrue();

        assertThat(operator.getLockInfo("{desk}:relock:forced").kind()).isEqualTo(LockInfo.Kind.NOT_A_LOCK);
        assertThat((Long) server.command("PTTL", "{desk}:relock:forced"))
                .isBetween(1L, Clients.STEADY_WATCHDOG.toMillis());
    }

    @Test
    void everyRelockLockTypeIsStillRecognisedAndForceUnlocked() {
        Relock holder = clients.create();
        holder.getLock("r").lock();
        holder.getSpinLock("s").lock();
        holder.getFairLock("f").lock();
        holder.getFencedLock("k").lock();
        holder.getSimpleLock("p").lock();
        holder.getReadWriteLock("rw").readLock().lock();
        holder.getReadWriteLock("w").writeLock().lock();
        long async = Relock.newOwnerId();
        holder.getLock("a").lockAsync(async).toCompletableFuture().join();

        assertThat(operator.getLock("r").forceUnlock()).isTrue();
        assertThat(operator.getSpinLock("s").forceUnlock()).isTrue();
        assertThat(operator.getFairLock("f").forceUnlock()).isTrue();
        assertThat(operator.getFencedLock("k").forceUnlock()).isTrue();
        assertThat(operator.getSimpleLock("p").forceUnlock()).isTrue();
        assertThat(operator.getReadWriteLock("rw").readLock().forceUnlock()).isTrue();
        assertThat(operator.getReadWriteLock("w").writeLock().forceUnlock()).isTrue();
        assertThat(operator.getLockInfo("a").kind()).as("an async owner's negative id").isEqualTo(LockInfo.Kind.REENTRANT);
        assertThat(operator.forceUnlock("a")).isTrue();
        for (String name : new String[] {"r", "s", "f", "p", "rw", "w", "a"}) {
            assertThat(server.command("EXISTS", name)).as(name).isEqualTo(0L);
        }
    }

    @Test
    void aLockOfAnotherTypeIsNotRemovedByThisTypesForceUnlock() {
        Relock holder = clients.create();
        holder.getSimpleLock("p").lock();
        holder.getReadWriteLock("rw").readLock().lock();

        assertThat(operator.getLock("p").forceUnlock()).isFalse();
        assertThat(operator.getReadWriteLock("rw").writeLock().forceUnlock()).isFalse();
        assertThat(operator.getSimpleLock("rw").forceUnlock()).isFalse();

        assertThat(holder.getSimpleLock("p").isHeldByCurrentThread()).isTrue();
        assertThat(holder.getReadWriteLock("rw").readLock().isHeldByCurrentThread()).isTrue();
    }

    /** The SHA-1 of the key's DUMP, computed on the server so that no byte is decoded on the way. */
    private String digest(String key) {
        Object digest = server.command("EVAL", "local d = redis.call('dump', KEYS[1]) "
                + "if not d then return false end return redis.sha1hex(d)", "1", key);
        assertThat(digest).as("%s exists", key).isNotNull();
        return (String) digest;
    }
}
