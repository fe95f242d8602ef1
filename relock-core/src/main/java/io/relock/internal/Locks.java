package io.relock.internal;

import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.FencedLock;

/**
 * The lock types, each one line: keys, a driver, a wait policy. A new type adds a driver (and
 * its Lua) and a line here.
 */
public final class Locks {

    private Locks() {}

    public static DistributedLock reentrant(ClientRuntime runtime, String name) {
        LockKeys keys = LockKeys.of(runtime, name, LockKeys.LOCK_CHANNEL_PREFIX);
        return new LockEngine(runtime, keys, new ReentrantDriver(runtime, keys, "reentrant"), WaitPolicy.PUB_SUB);
    }

    /** The reentrant layout, waiting by backoff instead of pub/sub. */
    public static DistributedLock spin(ClientRuntime runtime, String name) {
        LockKeys keys = LockKeys.of(runtime, name, LockKeys.LOCK_CHANNEL_PREFIX);
        return new LockEngine(runtime, keys, new ReentrantDriver(runtime, keys, "spin"),
                WaitPolicy.backoff(runtime.config().spinBackoffInitial(), runtime.config().spinBackoffMax()));
    }

    public static DistributedLock fair(ClientRuntime runtime, String name) {
        LockKeys keys = LockKeys.of(runtime, name, LockKeys.LOCK_CHANNEL_PREFIX);
        return new LockEngine(runtime, keys, new FairDriver(runtime, keys), WaitPolicy.PUB_SUB);
    }

    public static DistributedLock simple(ClientRuntime runtime, String name) {
        LockKeys keys = LockKeys.of(runtime, name, LockKeys.LOCK_CHANNEL_PREFIX);
        return new LockEngine(runtime, keys, new SimpleDriver(runtime, keys), WaitPolicy.PUB_SUB);
    }

    public static FencedLock fenced(ClientRuntime runtime, String name) {
        return new FencedRedisLock(runtime, name);
    }

    public static DistributedReadWriteLock readWrite(ClientRuntime runtime, String name) {
        return new RedisReadWriteLock(runtime, name);
    }
}
