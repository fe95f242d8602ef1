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
        this.queue = auxiliaryKey("queue");
        this.deadlines = auxiliaryKey("timeouts");
        this.waiterTimeout = Long.toString(runtime.config().threadWaitTime().toMillis());
    }

    @Override
    protected String channelFor(String field) {
        return channel() + ":" + field;
    }

    @Override
    protected CompletableFuture<Attempt> acquireOnce(String field, long leaseMillis) {
        return runtime.gateway().<Long>eval(Script.FAIR_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, Long.toString(leaseMillis), field, waiterTimeout)
                .thenApply(Attempt::fromTtl);
    }

    private CompletableFuture<Long> release(String field, long leaseMillis, String countBefore) {
        return runtime.gateway().eval(Script.FAIR_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, Long.toString(leaseMillis),
                field, channel(), countBefore);
    }

    @Override
    protected CompletableFuture<Long> releaseOnce(String field, long leaseMillis) {
        return release(field, leaseMillis, "");
    }

    @Override
    protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
        return release(field, runtime.watchdog().leaseMillis(), Integer.toString(countBefore));
    }

    @Override
    protected CompletableFuture<?> abandonOnce(String field) {
        return runtime.gateway().eval(Script.FAIR_LEAVE, ScriptOutputType.INTEGER,
                new String[] {key(), queue, deadlines}, UnlockChannels.UNLOCK_MESSAGE, field, channel());
    }

    @Override
    public boolean forceUnlock() {
        runtime.checkOpen();
        CompletableFuture<Long> reply = runtime.gateway().eval(Script.FAIR_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {key(), queue}, UnlockChannels.UNLOCK_MESSAGE, channel());
        return Futures.await(reply, "force-unlock lock '" + getName() + "'") == 1;
    }

    @Override
    public String toString() {
        return "FairRedisLock{name='" + getName() + "'}";
    }
}
