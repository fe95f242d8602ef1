package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.Renewal;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.redis.Script;
import java.util.concurrent.CompletableFuture;

/**
 * The plain lock: a string key set with {@code SET NX PX} to the owner's token, released by
 * compare-and-delete. Not reentrant: acquiring it again while holding it is an
 * {@link IllegalMonitorStateException}. Waits and renews like the reentrant lock.
 */
final class SimpleDriver extends KeyDriver {

    private static final long ALREADY_HELD = -3;

    SimpleDriver(DriverClient runtime, LockKeys keys, String type) {
        super(runtime, keys, type);
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        return this.<Long>eval(request, Script.SIMPLE_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {keys.key()}, request.lease(), request.field()).thenApply(ttl -> {
                    if (ttl != null && ttl == ALREADY_HELD) {
                        throw new IllegalMonitorStateException("lock '" + keys.name()
                                + "' is not reentrant and is already held by " + request.field());
                    }
                    return Attempt.fromTtl(ttl);
                });
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        return eval(request, Script.SIMPLE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE, request.field());
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        // Never reentrant, so an applied acquire is exactly a key holding this owner's token.
        return runtime.gateway().<Long>eval(Script.SIMPLE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE, field)
                .thenApply(released -> released == null ? 0L : released);
    }

    @Override
    public CompletableFuture<Integer> holdCount(String field) {
        return runtime.gateway().value(keys.key()).thenApply(holder -> field.equals(holder) ? 1 : 0);
    }

    /** Deletes the key and announces the release if it holds a simple lock's token. */
    @Override
    public CompletableFuture<Long> forceRelease() {
        return forceRelease("string");
    }

    @Override
    public Renewal renewal() {
        return Script.SIMPLE_RENEW;
    }

    @Override
    public boolean keepsMinimumHold() {
        return true;
    }

    @Override
    public CompletableFuture<Long> keep(String field, long keepMillis) {
        return keepIn(field, keepMillis, "string");
    }
}
