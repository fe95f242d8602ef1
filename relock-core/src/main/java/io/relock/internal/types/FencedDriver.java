package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.redis.Script;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The reentrant layout whose acquire also increments and returns a fencing token ({@code {name}:token}). */
final class FencedDriver extends ReentrantDriver implements TokenDriver {

    private final String tokenKey;

    FencedDriver(DriverClient runtime, LockKeys keys, String type) {
        super(runtime, keys, type);
        this.tokenKey = keys.ownKey("token");
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        return this.<List<Object>>eval(request, Script.FENCED_ACQUIRE, ScriptOutputType.MULTI,
                new String[] {keys.key(), tokenKey}, request.lease(), request.field(), request.countBefore(),
                request.takeOver())
                .thenApply(reply -> {
                    long value = ((Number) reply.get(1)).longValue();
                    return ((Number) reply.get(0)).longValue() == 1 ? Attempt.acquired(value) : Attempt.busy(value);
                });
    }

    /** Every new holder must take a token in its acquire, so its waiters take no turns: no grant, no hand-over. */
    @Override
    public boolean takesTurns() {
        return false;
    }

    @Override
    public CompletableFuture<Long> token() {
        return runtime.gateway().eval(Script.FENCED_TOKEN, ScriptOutputType.INTEGER,
                new String[] {keys.key(), tokenKey});
    }
}
