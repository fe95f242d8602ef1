package io.relock.spring;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.LockListener;
import io.relock.Relock;
import io.relock.RelockException;

/** The one place that takes a lock, runs guarded code and releases: for the annotation and the template. */
final class LockRunner {

    private static final Logger LOG = LoggerFactory.getLogger(LockRunner.class);

    /** Code that runs under the lock; it may throw anything, and the caller gets it unchanged. */
    @FunctionalInterface
    interface Body<T> {
        T call() throws Throwable;
    }

    /** What the caller gets instead when the lock was not acquired in time. */
    @FunctionalInterface
    interface NotAcquired<T> {
        T handle(LockNotAcquiredException notAcquired) throws Throwable;
    }

    /**
     * One guarded call's lock: type, sorted distinct names, wait (null: the default), lease (null:
     * watchdog), and the minimum hold (null: none; see {@link WithLock#holdAtLeast()}).
     */
    record Request(WithLock.Type type, List<String> names, Duration waitTime, Duration leaseTime,
            Duration holdAtLeast) {

        Request(WithLock.Type type, List<String> names, Duration waitTime, Duration leaseTime) {
            this(type, names, waitTime, leaseTime, null);
        }
    }

    private final Relock relock;
    private final boolean throwOnLost;
    private final Duration defaultWaitTime;
    private final LockListener listener;

    /** {@code defaultWaitTime}: for requests without a wait time; null to wait until acquired. */
    LockRunner(Relock relock, boolean throwOnLost, Duration defaultWaitTime) {
        this.relock = relock;
        this.throwOnLost = throwOnLost;
        this.defaultWaitTime = defaultWaitTime;
        this.listener = event -> RelockLocks.lost(relock, event);
        relock.addLockListener(listener);
    }

    Relock relock() {
        return relock;
    }

    Duration defaultWaitTime() {
        return defaultWaitTime;
    }

    void close() {
        relock.removeLockListener(listener);
    }

    <T> T run(Request request, Body<T> body, NotAcquired<T> notAcquired) throws Throwable {
        checkHoldAtLeast(request);
        DistributedLock lock = lockOf(request);
        Duration waitTime = request.waitTime() != null ? request.waitTime() : defaultWaitTime;
        long waitMillis = waitTime == null ? Long.MAX_VALUE : millis(waitTime);
        long leaseMillis = request.leaseTime() == null ? -1 : request.leaseTime().toMillis();
        long owner = Thread.currentThread().getId();
        Map<String, Long> tokens = new LinkedHashMap<>();
        long acquireStartNanos = System.nanoTime();
        try {
            if (!acquire(request, lock, waitMillis, leaseMillis, tokens)) {
                return notAcquired.handle(new LockNotAcquiredException(request.names(), waitTime, null));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(request.names(), waitTime, e);
        }
        RelockLocks.Held held = new RelockLocks.Held(relock, lock, throwOnLost, request.names(), owner, tokens,
                leaseMillis > 0, leaseMillis > 0 ? leaseDeadline(lock, acquireStartNanos, leaseMillis) : 0);
        RelockLocks.enter(held);
        T result = null;
        Throwable failure = null;
        try {
            result = body.call();
        } catch (Throwable t) {
            failure = t;
        } finally {
            RelockLocks.exit(held);
        }
        boolean lost = held.isLost();
        Throwable lostCause = held.lostCause();
        try {
            if (request.holdAtLeast() != null) {
                // Kept whatever the outcome, as ShedLock's lockAtLeastFor: a job that failed fast
                // is not run again by another node in the same period.
                lock.unlock(request.holdAtLeast());
            } else {
                lock.unlock();
            }
        } catch (IllegalMonitorStateException e) {
            // The lease ran out or the watchdog lost the lock: this client no longer holds it.
            lost = true;
            lostCause = lostCause == null ? e : lostCause;
        } catch (RuntimeException e) {
            // Redis failed on release: the lock stays until its lease ends, and the caller must know.
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (lost) {
            LockLostException lostException = new LockLostException(request.names(), owner, lostCause, false);
            if (!throwOnLost) {
                LOG.warn("{}", lostException.getMessage(), lostCause);
            } else if (failure == null) {
                failure = lostException;
            } else if (failure != held.rolledBackWith()) {
                failure.addSuppressed(lostException);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    /**
     * The asynchronous form of {@link #run}, for a method that returns a {@code CompletionStage}:
     * the lock is taken for an owner of its own ({@link Relock#newOwnerId()}) without blocking,
     * {@code body} runs once it is held (on the thread that completed the acquire), and the lock
     * is released when the stage {@code body} returned completes. Every failure completes the
     * returned future instead of being thrown: not acquired → what {@code notAcquired} returns
     * (a stage, which is followed) or throws; Redis failing while acquiring →
     * {@code RelockException}; the body's failure as is; the lease lost meanwhile →
     * {@link LockLostException} (a warning only, with {@code relock.on-lock-lost=log}).
     * Cancelling the returned future cancels the acquire still waiting, or else the body's stage.
     */
    CompletableFuture<Object> runAsync(Request request, Body<CompletionStage<?>> body, NotAcquired<Object> notAcquired) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        DistributedLock lock;
        try {
            checkHoldAtLeast(request);
            lock = lockOf(request);
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            return result;
        }
        Duration waitTime = request.waitTime() != null ? request.waitTime() : defaultWaitTime;
        long leaseMillis = request.leaseTime() == null ? -1 : request.leaseTime().toMillis();
        long owner = Relock.newOwnerId();
        // The library's own stage, not a derived one: cancelling it is what takes the wait out of the queue.
        CompletableFuture<?> acquiring;
        try {
            acquiring = (waitTime == null ? lock.lockAsync(leaseMillis, TimeUnit.MILLISECONDS, owner)
                    : lock.tryLockAsync(millis(waitTime), leaseMillis, TimeUnit.MILLISECONDS, owner)).toCompletableFuture();
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            return result;
        }
        AtomicReference<CompletableFuture<?>> work = new AtomicReference<>();
        result.whenComplete((value, failure) -> {
            if (result.isCancelled()) {
                acquiring.cancel(false);
                CompletableFuture<?> started = work.get();
                if (started != null) {
                    started.cancel(false);
                }
            }
        });
        acquiring.whenComplete((outcome, failure) -> {
            if (failure != null) {
                result.completeExceptionally(unwrap(failure));
            } else if (Boolean.FALSE.equals(outcome)) { // lockAsync completes with null, once acquired
                follow(() -> notAcquired.handle(new LockNotAcquiredException(request.names(), waitTime, null)), result);
            } else if (result.isDone()) {
                release(request, lock, owner, null, null); // cancelled while the acquire was on its way
            } else {
                CompletableFuture<?> stage;
                try {
                    stage = Objects.requireNonNull(body.call(), "the method returned a null CompletionStage")
                            .toCompletableFuture();
                } catch (Throwable t) {
                    release(request, lock, owner, null, t).whenComplete((v, e) -> result.completeExceptionally(e));
                    return;
                }
                work.set(stage);
                if (result.isCancelled()) {
                    stage.cancel(false);
                }
                stage.whenComplete((value, error) -> release(request, lock, owner, value, unwrap(error))
                        .whenComplete((released, releaseFailure) -> {
                            if (releaseFailure != null) {
                                result.completeExceptionally(releaseFailure);
                            } else {
                                result.complete(released);
                            }
                        }));
            }
        });
        return result;
    }

    /**
     * Releases the async owner's hold after its work ended with {@code value} or {@code failure},
     * and completes with what the caller gets: the value, or the failure, with a failed release
     * added (or a loss reported) as {@link #run} does.
     */
    private CompletableFuture<Object> release(Request request, DistributedLock lock, long owner, Object value,
            Throwable failure) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        CompletionStage<Void> release;
        try {
            release = request.holdAtLeast() != null ? lock.unlockAsync(owner, request.holdAtLeast())
                    : lock.unlockAsync(owner);
        } catch (RuntimeException e) {
            release = CompletableFuture.failedFuture(e);
        }
        release.whenComplete((released, releaseError) -> {
            Throwable error = unwrap(releaseError);
            Throwable reported = failure;
            if (error instanceof IllegalMonitorStateException) {
                // The lease ran out or the watchdog lost the lock: this owner no longer held it.
                LockLostException lost = new LockLostException(request.names(), owner, error, false);
                if (!throwOnLost) {
                    LOG.warn("{}", lost.getMessage(), error);
                } else if (reported == null) {
                    reported = lost;
                } else {
                    reported.addSuppressed(lost);
                }
            } else if (error != null) {
                if (reported == null) {
                    reported = error;
                } else {
                    reported.addSuppressed(error);
                }
            }
            if (reported != null) {
                outcome.completeExceptionally(reported);
            } else {
                outcome.complete(value);
            }
        });
        return outcome;
    }

    /** Completes {@code result} as the stage that {@code action} returns (or throws) does. */
    private static void follow(Body<Object> action, CompletableFuture<Object> result) {
        Object outcome;
        try {
            outcome = action.call();
        } catch (Throwable t) {
            result.completeExceptionally(t);
            return;
        }
        if (outcome instanceof CompletionStage<?> stage) {
            stage.whenComplete((value, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(unwrap(failure));
                } else {
                    result.complete(value);
                }
            });
        } else {
            result.complete(outcome);
        }
    }

    /** The failure inside a stage's {@link CompletionException} wrapper. */
    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private static void checkHoldAtLeast(Request request) {
        if (request.holdAtLeast() != null && request.names().size() > 1) {
            throw new IllegalArgumentException("a minimum hold (holdAtLeast " + request.holdAtLeast()
                    + ") needs one lock, not the " + request.names().size() + " of " + request.names()
                    + ": no lock was taken and the code did not run");
        }
    }

    /**
     * When a fixed lease is over at the latest, so that {@link RelockLocks.Held#isLost()} never
     * believes in a lease Redis already ended: Redis started it when the acquire script ran,
     * after {@code acquireStartNanos} but before the reply, and the key's remaining time read
     * afterwards bounds it closer (it was read after {@code asked}). Costs one round trip, and
     * only for fixed leases.
     */
    private static long leaseDeadline(DistributedLock lock, long acquireStartNanos, long leaseMillis) {
        long deadline = acquireStartNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        long asked = System.nanoTime();
        try {
            long ttl = lock.remainTimeToLive();
            if (ttl == -2) {
                return asked; // already gone
            }
            if (ttl >= 0) {
                deadline = Math.max(deadline, asked + TimeUnit.MILLISECONDS.toNanos(ttl));
            }
        } catch (RelockException e) {
            // Redis failed just after the acquire: keep the bound from the acquire's start, and
            // let the release report what happened.
            LOG.debug("cannot read the lease left of {}: {}", lock.getName(), e.toString());
        }
        return deadline;
    }

    /** A wait of more than 292 million years is a wait until acquired, not an overflow. */
    private static long millis(Duration duration) {
        try {
            return duration.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private boolean acquire(Request request, DistributedLock lock, long waitMillis, long leaseMillis,
            Map<String, Long> tokens) throws InterruptedException {
        if (request.type() == WithLock.Type.FENCED && lock instanceof FencedLock fenced) {
            Long token = fenced.tryLockAndGetToken(waitMillis, leaseMillis, TimeUnit.MILLISECONDS);
            if (token != null) {
                tokens.put(fenced.getName(), token);
            }
            return token != null;
        }
        if (!lock.tryLock(waitMillis, leaseMillis, TimeUnit.MILLISECONDS)) {
            return false;
        }
        if (request.type() == WithLock.Type.FENCED) {
            for (String name : request.names()) {
                tokens.put(name, relock.getFencedLock(name).getToken());
            }
        }
        return true;
    }

    /** The lock of a request: its one lock, or a multi-lock of its names. */
    DistributedLock lockOf(Request request) {
        if (request.names().size() == 1) {
            return lockOf(request.type(), request.names().get(0));
        }
        List<DistributedLock> members = new ArrayList<>(request.names().size());
        for (String name : request.names()) {
            members.add(lockOf(request.type(), name));
        }
        return relock.getMultiLock(members.toArray(DistributedLock[]::new));
    }

    private DistributedLock lockOf(WithLock.Type type, String name) {
        return type.lock(relock, name);
    }
}
