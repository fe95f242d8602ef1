package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;

/**
 * The seeds' plain lock: a string key set with {@code SET NX PX} to the owner's token, released
 * by compare-and-delete. Not reentrant: acquiring it again while holding it is an
 * {@link IllegalMonitorStateException}. Waits and renews like the reentrant lock.
 */
public final class SimpleRedisLock extends LockBase {

    private static final long ALREADY_HELD = -3;

    public SimpleRedisLock(ClientRuntime runtime, String name) {
        super(runtime, name);
    }

    @Override
    protected CompletableFuture<Attempt> acquireOnce(Request request) {
        return request.<Long>eval(runtime.gateway(), Script.SIMPLE_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {key()}, request.lease(), request.field()).thenApply(ttl -> {
                    if (ttl != null && ttl == ALREADY_HELD) {
                        throw new IllegalMonitorStateException("lock '" + getName()
                                + "' is not reentrant and is already held by " + request.field());
                    }
                    return Attempt.fromTtl(ttl);
                });
    }

    @Override
    protected CompletableFuture<Long> releaseOnce(Request request) {
        return request.eval(runtime.gateway(), Script.SIMPLE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), channel()}, UnlockChannels.UNLOCK_MESSAGE, request.field());
    }

    @Override
    protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
        // Never reentrant, so an applied acquire is exactly a key holding this owner's token.
        return runtime.gateway().<Long>eval(Script.SIMPLE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), channel()}, UnlockChannels.UNLOCK_MESSAGE, field)
                .thenApply(released -> released == null ? 0L : released);
    }

    @Override
    protected CompletableFuture<Integer> holdCountOnce(String field) {
        return runtime.gateway().<String>read(commands -> commands.get(key()))
                .thenApply(holder -> field.equals(holder) ? 1 : 0);
    }

    @Override
    protected Script renewScript() {
        return Script.SIMPLE_RENEW;
    }

    @Override
    String type() {
        return "simple";
    }

    @Override
    public String toString() {
        return "SimpleRedisLock{name='" + getName() + "'}";
    }
}
