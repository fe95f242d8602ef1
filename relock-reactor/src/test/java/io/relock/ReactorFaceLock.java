package io.relock;

import io.relock.reactor.ReactiveHold;
import io.relock.reactor.ReactiveLock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import reactor.core.publisher.Mono;

/**
 * A {@link DistributedLock} whose acquires and releases go through {@link ReactiveLock}, so that
 * {@link LockContractTest} checks the reactive face. Each calling thread stands for one pipeline:
 * it gets one owner id from {@link Relock#newOwnerId()} for good and passes it in the Reactor
 * context ({@link ReactiveLock#ownedBy}); the async forms pass the owner they are given. The
 * adapter waits for the face's {@code Mono}s on the calling thread (a test thread, never a
 * Reactor one), and keeps each owner's {@link ReactiveHold}s: an unlock releases the latest, and
 * the hold count is their number.
 */
final class ReactorFaceLock implements DistributedLock {

    /** One owner per thread, for every adapter, as a thread id is the same for every lock. */
    private static final Map<Long, Long> OWNERS = new ConcurrentHashMap<>();

    private final DistributedLock target;
    private final ReactiveLock face;
    private final Map<Long, Deque<ReactiveHold>> holds = new ConcurrentHashMap<>();

    ReactorFaceLock(DistributedLock target) {
        this.target = target;
        this.face = ReactiveLock.of(target);
    }

    private static long currentOwner() {
        return OWNERS.computeIfAbsent(Thread.currentThread().getId(), thread -> Relock.newOwnerId());
    }

    /** {@code amount} of {@code unit}, or a duration too long for milliseconds when it does not fit. */
    private static Duration duration(long amount, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit must not be null");
        try {
            return Duration.of(amount, unit.toChronoUnit());
        } catch (ArithmeticException tooLong) {
            return Duration.ofSeconds(amount < 0 ? Long.MIN_VALUE : Long.MAX_VALUE);
        }
    }

    // ---- acquiring ----------------------------------------------------------------------------

    private Mono<ReactiveHold> acquisition(long leaseTime, TimeUnit unit, long owner) {
        Mono<ReactiveHold> acquire = leaseTime == -1 ? face.acquire() : face.acquire(duration(leaseTime, unit));
        return acquire.contextWrite(ReactiveLock.ownedBy(owner));
    }

    private Mono<ReactiveHold> attempt(long waitTime, long leaseTime, TimeUnit unit, long owner) {
        Duration wait = duration(waitTime, unit);
        Mono<ReactiveHold> attempt = leaseTime == -1
                ? face.tryAcquire(wait) : face.tryAcquire(wait, duration(leaseTime, unit));
        return attempt.contextWrite(ReactiveLock.ownedBy(owner));
    }

    private boolean keep(ReactiveHold hold) {
        if (hold == null) {
            return false;
        }
        holds.computeIfAbsent(hold.owner(), owner -> new ArrayDeque<>());
        Deque<ReactiveHold> mine = holds.get(hold.owner());
        synchronized (mine) {
            mine.push(hold);
        }
        return true;
    }

    /** Waits for {@code mono} on this thread; an interrupt cancels it when {@code interruptibly}. */
    private static <T> T await(Mono<T> mono, boolean interruptibly) throws InterruptedException {
        CompletableFuture<T> result = mono.toFuture();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    if (interruptibly) {
                        result.cancel(false);
                        throw e;
                    }
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrown(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static <T> T awaitUninterruptibly(Mono<T> mono) {
        try {
            return await(mono, false);
        } catch (InterruptedException impossible) {
            throw new AssertionError(impossible);
        }
    }

    /** What the plain lock would throw: its own IllegalMonitorStateException for a hold found gone. */
    private static RuntimeException rethrown(Throwable failure) {
        if (failure instanceof LockLostException lost && lost.getCause() instanceof IllegalMonitorStateException gone) {
            return gone;
        }
        if (failure instanceof RuntimeException runtime) {
            return runtime;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        return new IllegalStateException(failure);
    }

    @Override
    public void lock() {
        keep(awaitUninterruptibly(acquisition(-1, TimeUnit.MILLISECONDS, currentOwner())));
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        keep(awaitUninterruptibly(acquisition(leaseTime, unit, currentOwner())));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInterruptibly(-1, TimeUnit.MILLISECONDS);
    }

    @Override
    public void lockInterruptibly(long leaseTime, TimeUnit unit) throws InterruptedException {
        Mono<ReactiveHold> acquisition = acquisition(leaseTime, unit, currentOwner());
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + getName() + "'");
        }
        keep(await(acquisition, true));
    }

    @Override
    public boolean tryLock() {
        return keep(awaitUninterruptibly(attempt(0, -1, TimeUnit.MILLISECONDS, currentOwner())));
    }

    @Override
    public boolean tryLock(long waitTime, TimeUnit unit) throws InterruptedException {
        return tryLock(waitTime, -1, unit);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Mono<ReactiveHold> attempt = attempt(waitTime, leaseTime, unit, currentOwner());
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + getName() + "'");
        }
        return keep(await(attempt, true));
    }

    // ---- releasing ----------------------------------------------------------------------------

    /** The owner's latest hold, taken off its stack, or null. */
    private ReactiveHold latest(long owner) {
        Deque<ReactiveHold> mine = holds.get(owner);
        if (mine == null) {
            return null;
        }
        synchronized (mine) {
            return mine.poll();
        }
    }

    @Override
    public void unlock() {
        long owner = currentOwner();
        ReactiveHold hold = latest(owner);
        if (hold == null) {
            // Nothing held through the face: the plain lock says what an owner's wrong unlock is.
            awaitUninterruptibly(Mono.fromCompletionStage(target.unlockAsync(owner)));
            return;
        }
        awaitUninterruptibly(hold.release());
    }

    @Override
    public CompletionStage<Void> unlockAsync(long ownerThreadId) {
        ReactiveHold hold = latest(ownerThreadId);
        if (hold == null) {
            return target.unlockAsync(ownerThreadId);
        }
        return hold.release().onErrorMap(failure -> rethrown(failure)).toFuture();
    }

    // ---- async forms --------------------------------------------------------------------------

    @Override
    public CompletionStage<Void> lockAsync(long ownerThreadId) {
        return acquisition(-1, TimeUnit.MILLISECONDS, ownerThreadId).doOnNext(this::keep).then().toFuture();
    }

    @Override
    public CompletionStage<Void> lockAsync(long leaseTime, TimeUnit unit, long ownerThreadId) {
        return acquisition(leaseTime, unit, ownerThreadId).doOnNext(this::keep).then().toFuture();
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long ownerThreadId) {
        return tryLockAsync(0, -1, TimeUnit.MILLISECONDS, ownerThreadId);
    }

    @Override
    public CompletionStage<Boolean> tryLockAsync(long waitTime, long leaseTime, TimeUnit unit, long ownerThreadId) {
        return attempt(waitTime, leaseTime, unit, ownerThreadId).map(this::keep).defaultIfEmpty(false).toFuture();
    }

    // ---- the rest: the plain lock's --------------------------------------------------------------

    @Override
    public int getHoldCount() {
        Deque<ReactiveHold> mine = holds.get(currentOwner());
        if (mine == null) {
            return 0;
        }
        synchronized (mine) {
            return mine.size();
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return target.isHeldByThread(currentOwner());
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        Long owner = OWNERS.get(threadId);
        return target.isHeldByThread(threadId) || owner != null && target.isHeldByThread(owner);
    }

    @Override
    public String getName() {
        return target.getName();
    }

    @Override
    public boolean forceUnlock() {
        return target.forceUnlock();
    }

    @Override
    public boolean isLocked() {
        return target.isLocked();
    }

    @Override
    public long remainTimeToLive() {
        return target.remainTimeToLive();
    }

    @Override
    public ListenerRegistration addLostListener(long ownerThreadId, LockListener listener) {
        return target.addLostListener(ownerThreadId, listener);
    }

    @Override
    public Condition newCondition() {
        return target.newCondition();
    }
}
