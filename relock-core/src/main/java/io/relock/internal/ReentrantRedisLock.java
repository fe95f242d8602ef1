package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;

/**
 * The reentrant lock in Redisson's layout: a hash from owner to hold count, expiring after the
 * lease, with releases announced on {@code redisson_lock__channel:{name}}.
 */
public class ReentrantRedisLock extends LockBase {

    public ReentrantRedisLock(ClientRuntime runtime, String name) {
        super(runtime, name);
    }

    @Override
    protected CompletableFuture<Attempt> acquireOnce(Request request) {
        return request.<Long>eval(runtime.gateway(), Script.LOCK_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {key()}, request.lease(), request.field(), request.countBefore())
                .thenApply(Attempt::fromTtl);
    }

    @Override
    protected CompletableFuture<Long> releaseOnce(Request request) {
        return request.eval(runtime.gateway(), Script.LOCK_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), channel()}, UnlockChannels.UNLOCK_MESSAGE, request.lease(), request.field(),
                request.countBefore());
    }

    @Override
    protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
        return runtime.gateway().eval(Script.LOCK_ROLLBACK, ScriptOutputType.INTEGER, new String[] {key(), channel()},
                field, Integer.toString(countBefore), UnlockChannels.UNLOCK_MESSAGE);
    }

    @Override
    protected CompletableFuture<Integer> holdCountOnce(String field) {
        return runtime.gateway().<String>read(commands -> commands.hget(key(), field))
                .thenApply(count -> count == null ? 0 : Integer.parseInt(count));
    }

    @Override
    String type() {
        return "reentrant";
    }

    @Override
    public String toString() {
        return "ReentrantRedisLock{name='" + getName() + "'}";
    }
}
