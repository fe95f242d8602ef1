package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.Turn;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.redis.Script;
import java.util.concurrent.CompletableFuture;

/**
 * The fair lock: waiters across all clients get it in the order they first asked. Same hash
 * layout as the reentrant lock; the queue ({@code {name}:queue}) and the waiters' deadlines
 * ({@code {name}:timeouts}) sit under the lock's hash tag. A release wakes only the next waiter,
 * on its own channel; a waiter whose process died is skipped once its deadline
 * ({@link io.relock.RelockConfig#threadWaitTime()}, on the server's clock) has passed.
 */
final class FairDriver extends ReentrantDriver {

    private final String queue;
    private final String deadlines;
    private final String waiterTimeout;

    FairDriver(DriverClient runtime, LockKeys keys, String type) {
        super(runtime, keys, type);
        this.queue = keys.ownKey("queue");
        this.deadlines = keys.ownKey("timeouts");
        this.waiterTimeout = Long.toString(runtime.config().threadWaitTime().toMillis());
    }

    @Override
    public String channelFor(LockKeys lock, String field) {
        return lock.channel() + ":" + field;
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        return this.<Long>eval(request, Script.FAIR_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue, deadlines}, request.lease(), request.field(), waiterTimeout,
                request.countBefore()).thenApply(Attempt::fromTtl);
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        return eval(request, Script.FAIR_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, request.lease(),
                request.field(), keys.channel(), "", request.countBefore());
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        return runtime.gateway().eval(Script.FAIR_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE,
                Long.toString(runtime.watchdog().leaseMillis()), field, keys.channel(), Integer.toString(countBefore),
                "0");
    }

    /** Waiters wait in the fair queue, each woken on its own channel: they take no turns (see {@link Turn}). */
    @Override
    public boolean takesTurns() {
        return false;
    }

    @Override
    public CompletableFuture<?> abandon(String field, long ticket) {
        return runtime.gateway().eval(Script.FAIR_LEAVE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, field, keys.channel());
    }

    @Override
    public CompletableFuture<Long> forceRelease() {
        return runtime.gateway().eval(Script.FAIR_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue}, UnlockChannels.UNLOCK_MESSAGE, keys.channel(), forcedNoteMillis());
    }
}
