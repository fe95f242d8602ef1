package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import io.relock.FencedLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The reentrant lock whose acquire also increments and returns a fencing token. */
public final class FencedRedisLock extends ReentrantRedisLock implements FencedLock {

    private final String tokenKey;

    public FencedRedisLock(ClientRuntime runtime, String name) {
        super(runtime, name);
        this.tokenKey = ownKey("token");
    }

    @Override
    protected CompletableFuture<Attempt> acquireOnce(Request request) {
        return request.<List<Object>>eval(runtime.gateway(), Script.FENCED_ACQUIRE, ScriptOutputType.MULTI,
                new String[] {key(), tokenKey}, request.lease(), request.field(), request.countBefore())
                .thenApply(reply -> {
                    long value = ((Number) reply.get(1)).longValue();
                    return ((Number) reply.get(0)).longValue() == 1 ? Attempt.acquired(value) : Attempt.busy(value);
                });
    }

    @Override
    public long lockAndGetToken() {
        return acquireUninterruptibly(Args.FOREVER_NANOS, Args.WATCHDOG_LEASE).token();
    }

    @Override
    public Long tryLockAndGetToken() {
        return tokenOf(acquireUninterruptibly(0, Args.WATCHDOG_LEASE));
    }

    @Override
    public Long tryLockAndGetToken(long waitTime, TimeUnit unit) throws InterruptedException {
        return tokenOf(acquireInterruptibly(Args.waitNanos(waitTime, unit), Args.WATCHDOG_LEASE));
    }

    @Override
    public Long tryLockAndGetToken(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = Args.leaseMillis(leaseTime, unit);
        return tokenOf(acquireInterruptibly(Args.waitNanos(waitTime, unit), lease));
    }

    private static Long tokenOf(Attempt attempt) {
        return attempt.acquired() ? attempt.token() : null;
    }

    @Override
    public Long getToken() {
        runtime.checkOpen();
        return Futures.await(runtime.gateway().<Long>eval(Script.FENCED_TOKEN, ScriptOutputType.INTEGER,
                new String[] {key(), tokenKey}), "read the fencing token of lock '" + getName() + "'");
    }

    @Override
    String type() {
        return "fenced";
    }

    @Override
    public String toString() {
        return "FencedRedisLock{name='" + getName() + "'}";
    }
}
