package io.relock.internal.types;

import io.relock.FencedLock;
import io.relock.ListenerRegistration;
import io.relock.LockListener;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.EngineBacked;
import io.relock.internal.engine.LockClient;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.WaitPolicy;
import io.relock.internal.support.Args;
import io.relock.internal.support.Futures;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * A fenced lock: the engine over a {@link TokenDriver} (on Redis {@link FencedDriver}), plus the
 * calls that hand out the token.
 * Every {@link io.relock.DistributedLock} method is the engine's.
 */
public final class FencedEngineLock implements FencedLock, EngineBacked {

    private final LockEngine engine;
    private final TokenDriver driver;

    /** A fenced lock named by {@code keys} on {@code client}, whose waiters wait as {@code wait} says. */
    public FencedEngineLock(LockClient client, LockKeys keys, TokenDriver driver, WaitPolicy wait) {
        this.driver = driver;
        this.engine = new LockEngine(client, keys, driver, wait);
    }

    @Override
    public LockEngine engine() {
        return engine;
    }

    @Override
    public long lockAndGetToken() {
        return engine.acquireUninterruptibly(Args.FOREVER_NANOS, Args.WATCHDOG_LEASE).token();
    }

    @Override
    public Long tryLockAndGetToken() {
        return tokenOf(engine.acquireUninterruptibly(0, Args.WATCHDOG_LEASE));
    }

    @Override
    public Long tryLockAndGetToken(long waitTime, TimeUnit unit) throws InterruptedException {
        return tokenOf(engine.acquireInterruptibly(Args.waitNanos(waitTime, unit), Args.WATCHDOG_LEASE));
    }

    @Override
    public Long tryLockAndGetToken(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long lease = Args.leaseMillis(leaseTime, unit);
        return tokenOf(engine.acquireInterruptibly(Args.waitNanos(waitTime, unit), lease));
    }

    @Override
    public CompletionStage<Long> lockAndGetTokenAsync(long leaseTime, TimeUnit unit, long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return engine.acquireCancellable(ownerId, Args.FOREVER_NANOS, lease, LockDriver.Attempt::token);
    }

    @Override
    public CompletionStage<Long> tryLockAndGetTokenAsync(long waitTime, long leaseTime, TimeUnit unit,
            long ownerId) {
        long lease = Args.leaseMillis(leaseTime, unit);
        return engine.acquireCancellable(ownerId, Args.waitNanos(waitTime, unit), lease,
                FencedEngineLock::tokenOf);
    }

    private static Long tokenOf(LockDriver.Attempt attempt) {
        return attempt.acquired() ? attempt.token() : null;
    }

    @Override
    public Long getToken() {
        engine.checkOpen();
        return Futures.await(driver.token(), "read the fencing token of lock '" + getName() + "'");
    }

    // ---- the engine's ------------------------------------------------------------------------

    @Override
    public ListenerRegistration addLostListener(long ownerId, LockListener listener) {
        return engine.addLostListener(ownerId, listener);
    }

    @Override
    public void lock() {
        engine.lock();
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        engine.lock(leaseTime, unit);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        engine.lockInterruptibly();
    }

    @Override
    public void lockInterruptibly(long leaseTime, TimeUnit unit) throws InterruptedException {
        engine.lockInterruptibly(leaseTime, unit);
    }

    @Override
    public boolean tryLock() {
        return engine.tryLock();
    }

    @Override
    public boolean tryLock(long waitTime, TimeUnit unit) throws InterruptedException {
        return engine.tryLock(waitTime, unit);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        return engine.tryLock(waitTime, leaseTime, unit);
    }

    @Override
    public void unlock() {
        engine.unlock();
    }

    @Override
    public boolean forceUnlock() {
        return engine.forceUnlock();
    }

    @Override
    public boolean isLocked() {
        return engine.isLocked();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return engine.isHeldByCurrentThread();
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        return engine.isHeldByThread(threadId);
    }

    @Override
    public int getHoldCount() {
        return engine.getHoldCount();
    }

    @Override
    public long remainTimeToLive() {
        return engine.remainTimeToLive();
    }

    @Override
    public String getName() {
        return engine.getName();
    }

    @Override
    public CompletionStage<Void> lockAsync(long ownerId) {
        return engine.lockAsync(ownerId);
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerId) {
        return engine.lockAsync(leaseTime, unit, ownerId);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerId) {
        return engine.tryLockAsync(ownerId);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerId) {
        return engine.tryLockAsync(waitTime, leaseTime, unit, ownerId);
    }

    @Override
    public CompletionStage<Void> unlockAsync(long ownerId) {
        return engine.unlockAsync(ownerId);
    }

    @Override
    public Condition newCondition() {
        return engine.newCondition();
    }

    @Override
    public String toString() {
        return "FencedLock{name='" + getName() + "'}";
    }
}
