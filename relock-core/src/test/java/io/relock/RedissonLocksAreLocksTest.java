package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.RedisExtension;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The rule that keeps user data from force-unlocks still takes every lock Redisson writes for a
 * lock: Relock's inspector recognises it and its force-unlock removes it.
 */
class RedissonLocksAreLocksTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private RedissonClient redisson;
    private Relock operator;

    @BeforeEach
    void start() {
        operator = clients.create();
        Config config = new Config();
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
        redisson = Redisson.create(config);
    }

    @AfterEach
    void stop() {
        redisson.shutdown();
    }

    @Test
    void redissonsLocksOfEveryTypeAreRecognisedAndForceUnlocked() {
        redisson.getLock("rl").lock();
        redisson.getSpinLock("rs").lock();
        redisson.getFairLock("rf").lock();
        redisson.getFencedLock("rk").lock();
        redisson.getReadWriteLock("rr").readLock().lock();
        redisson.getReadWriteLock("rw").writeLock().lock();
        Map<String, LockInfo.Kind> expected = Map.of("rl", LockInfo.Kind.REENTRANT, "rs", LockInfo.Kind.REENTRANT,
                "rf", LockInfo.Kind.REENTRANT, "rk", LockInfo.Kind.REENTRANT, "rr", LockInfo.Kind.READ_WRITE,
                "rw", LockInfo.Kind.READ_WRITE);
        String holder = redisson.getId() + ":" + Thread.currentThread().getId();

        expected.forEach((name, kind) -> {
            LockInfo info = operator.getLockInfo(name);
            assertThat(info.kind()).as(name).isEqualTo(kind);
            assertThat(info.holders()).as(name).containsKey(name.equals("rw") ? holder + ":write" : holder);
        });
        assertThat(operator.getLock("rl").forceUnlock()).isTrue();
        assertThat(operator.getSpinLock("rs").forceUnlock()).isTrue();
        assertThat(operator.getFairLock("rf").forceUnlock()).isTrue();
        assertThat(operator.forceUnlock("rk")).isTrue();
        assertThat(operator.getReadWriteLock("rr").readLock().forceUnlock()).isTrue();
        assertThat(operator.forceUnlock("rw")).isTrue();
        for (String name : expected.keySet()) {
            assertThat(server.command("EXISTS", name)).as(name).isEqualTo(0L);
        }
    }
}
