package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;

/**
 * Seed 001's fair lock: waiters across all clients get it in the order they first asked.
 * Same hash layout as the reentrant lock; the queue ({@code {name}:queue}) and the waiters'
 * deadlines ({@code {name}:timeouts}) sit under the lock's hash tag. A release wakes only the
 * next waiter, on its own channel; a waiter whose process died is skipped once its deadline
 * ({@link io.relock.RelockConfig#threadWaitTime()}, on the server's clock) has passed.
 */
public final class FairRedisLock extends ReentrantRedisLock {

    private final String queue;
    private final String deadlines;
    private final String waiterTimeout;

    public FairRedisLock(ClientRuntime runtime, String name) {
        super(runtime, name);
        this.queue = ownKey("queue");
        this.deadlines = ownKey("timeouts");
        this.waiterTimeout = Long.toString(runtime.config().threadWaitTime().toMillis());
    }

    @Override
    protected String channelFor(String field) {
        return channel() + ":" + field;
    }

    @Override
    protected CompletableFuture<Attempt> acquireOnce(Request request) {
        return request.<Long>eval(runtime.gateway(), Script.FAIR_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, request.lease(), request.field(), waiterTimeout,
                request.countBefore()).thenApply(Attempt::fromTtl);
    }

    @Override
    protected CompletableFuture<Long> releaseOnce(Request request) {
        return request.eval(runtime.gateway(), Script.FAIR_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, request.lease(),
                request.field(), channel(), "", request.countBefore());
    }

    @Override
    protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
        return runtime.gateway().eval(Script.FAIR_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE,
                Long.toString(runtime.watchdog().leaseMillis()), field, channel(), Integer.toString(countBefore), "0");
    }

    @Override
    protected CompletableFuture<?> abandonOnce(String field) {
        return runtime.gateway().eval(Script.FAIR_LEAVE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, field, channel());
    }

    @Override
    protected CompletableFuture<Long> forceReleaseOnce() {
        return runtime.gateway().eval(Script.FAIR_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), queue}, UnlockChannels.UNLOCK_MESSAGE, channel());
    }

    @Override
    String type() {
        return "fair";
    }

    @Override
    public String toString() {
        return "FairRedisLock{name='" + getName() + "'}";
    }
}
