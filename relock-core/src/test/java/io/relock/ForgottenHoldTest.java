package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisExtension;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A hold that its client no longer knows of: a failover that lost a release (the promoted
 * replica never got the DEL) brings the lock back held by an owner whose client saw the release
 * succeed. When that owner acquires again, it takes the lock as a new hold, so its next release
 * frees the lock. Before, the acquire counted a re-entry on top of the forgotten hold, every
 * release left one behind, and while the owner kept taking the lock nobody else ever got it
 * (FailoverLivenessTest on Sentinel: one client took 14 933 acquisitions, the others none).
 *
 * <p>History checked: the owner's hold count on Redis is 1 after its new acquire, the lock is
 * free after its one release, and another client gets it at once.
 */
class ForgottenHoldTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void aReentrantLocksForgottenHoldIsTakenOverByItsOwner() throws Exception {
        Relock relock = clients.create();
        checkTakenOver(relock, relock.getLock("forgotten"), clients.create().getLock("forgotten"), "forgotten");
    }

    @Test
    void aFencedLocksForgottenHoldIsTakenOverWithANewToken() throws Exception {
        Relock relock = clients.create();
        FencedLock lock = relock.getFencedLock("forgotten-fenced");
        long first = lock.lockAndGetToken();
        lock.unlock();
        String field = forget("forgotten-fenced", relock);
        long second = lock.lockAndGetToken();
        assertThat(second).as("a new holder's token").isGreaterThan(first);
        assertThat(server.command("HGET", "forgotten-fenced", field)).isEqualTo("1");
        lock.unlock();
        assertThat(server.command("EXISTS", "forgotten-fenced")).isEqualTo(0L);
    }

    @Test
    void aWriteLocksForgottenHoldIsTakenOverByItsOwner() throws Exception {
        Relock relock = clients.create();
        checkTakenOver(relock, relock.getReadWriteLock("forgotten-rw").writeLock(),
                clients.create().getReadWriteLock("forgotten-rw").writeLock(), "forgotten-rw");
    }

    /**
     * History: the owner holds once; Redis counts a second hold of it that its client has not
     * heard of (a re-entry whose reply is still on its way). The release of the one hold the
     * client knows of sends no lease: Redis counts down to the other hold and leaves the key's
     * expiry as it was, neither deleting the key nor renewing a hold that no one may renew.
     */
    @Test
    void aLastReleaseLeavesAHoldRedisCountsAboveItWithItsExpiry() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("counted-above");
        lock.lock(20, TimeUnit.SECONDS);
        String field = relock.clientId() + ":" + Thread.currentThread().getId();
        server.command("HINCRBY", "counted-above", field, "1");
        server.command("PEXPIRE", "counted-above", "9000");
        lock.unlock();
        assertThat(server.command("HGET", "counted-above", field)).as("the hold Redis counted above").isEqualTo("1");
        assertThat((Long) server.command("PTTL", "counted-above")).as("its expiry, left as it was")
                .isBetween(1L, 9000L);
    }

    private void checkTakenOver(Relock relock, Lock lock, Lock rival, String key) throws Exception {
        lock.lock();
        lock.unlock();
        String field = forget(key, relock);
        lock.lock();
        assertThat(server.command("HGET", key, field)).as("the owner's hold count").isEqualTo("1");
        lock.unlock();
        assertThat(server.command("EXISTS", key)).as("the lock after its one release").isEqualTo(0L);
        assertThat(rival.tryLock(0, TimeUnit.SECONDS)).as("another client gets it").isTrue();
        rival.unlock();
    }

    /** Puts back the hold the owner just released, as a promoted replica that missed the release has it; returns its field. */
    private String forget(String key, Relock relock) {
        String field = relock.clientId() + ":" + Thread.currentThread().getId() + (key.endsWith("-rw") ? ":write" : "");
        if (key.endsWith("-rw")) {
            server.command("HSET", key, "mode", "write", field, "1");
        } else {
            server.command("HSET", key, field, "1");
        }
        server.command("PEXPIRE", key, "30000");
        return field;
    }
}
