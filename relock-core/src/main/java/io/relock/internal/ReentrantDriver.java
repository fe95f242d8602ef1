package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;

/**
 * The reentrant lock in Redisson's layout: a hash from owner to hold count, expiring after the
 * lease, with releases announced on {@code redisson_lock__channel:{name}}. The spin lock is the
 * same layout under another name, waiting by backoff.
 */
class ReentrantDriver extends KeyDriver {

    private final String type;

    ReentrantDriver(ClientRuntime runtime, LockKeys keys, String type) {
        super(runtime, keys);
        this.type = type;
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        return request.<Long>eval(runtime.gateway(), Script.LOCK_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {keys.key()}, request.lease(), request.field(), request.countBefore())
                .thenApply(Attempt::fromTtl);
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        return request.eval(runtime.gateway(), Script.LOCK_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE, request.lease(),
                request.field(), request.countBefore());
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        return runtime.gateway().eval(Script.LOCK_ROLLBACK, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, field, Integer.toString(countBefore),
                UnlockChannels.UNLOCK_MESSAGE);
    }

    @Override
    public CompletableFuture<Integer> holdCount(String field) {
        return hashCount(field);
    }

    @Override
    public Script renewScript() {
        return Script.LOCK_RENEW;
    }
}
