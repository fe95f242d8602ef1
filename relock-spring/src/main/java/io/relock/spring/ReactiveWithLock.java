package io.relock.spring;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;

import io.relock.DistributedLock;
import io.relock.reactor.ReactiveLock;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link WithLock} advice for methods that return a {@code Mono} or a {@code Flux}, and for
 * Kotlin {@code suspend} functions (Spring's AOP runs them as a {@code Mono}), through Relock's
 * Reactor face ({@link ReactiveLock}): each subscription takes the lock, invokes the method
 * (and the advice inside, a reactive {@code @Transactional} among it) holding it, and releases it
 * when the method's publisher terminates or is cancelled, and after a reactive transaction has
 * committed. The owner is the pipeline's (in its Reactor context), so a nested guarded call in
 * the same pipeline re-enters.
 *
 * <p>Errors arrive in the returned publisher, nothing is thrown from the call: a bad key's
 * {@code IllegalArgumentException}; not acquired → what {@link WithLock#onNotAcquired()} says
 * ({@link LockNotAcquiredException}, an empty publisher, or the fallback's publisher); the lease
 * lost (force-unlocked, not renewed in time, or a fixed {@code leaseTime} run out) → the
 * subscription to the method's {@code Mono} or {@code Flux} is cancelled (its {@code doOnCancel}
 * runs; no value passes on after the loss) and the caller's publisher errors with
 * {@link LockLostException}; Redis failing → {@code io.relock.RelockException}.
 *
 * <p>Loaded only for such methods, which {@link LockPlan} accepts only when Project Reactor and
 * relock-reactor are on the class path.
 */
final class ReactiveWithLock {

    private ReactiveWithLock() {}

    /** The guarded publisher that replaces the method's: a {@code Flux} for {@code FLUX}, else a {@code Mono}. */
    static Object guard(LockPlan plan, LockRunner runner, MethodInvocation invocation, Object target, Object[] args) {
        boolean flux = plan.returns() == LockPlan.Returns.FLUX;
        LockRunner.Request request;
        DistributedLock lock;
        try {
            request = plan.request(target, args);
            lock = runner.lockOf(request);
        } catch (RuntimeException e) {
            return flux ? Flux.error(e) : Mono.error(e);
        }
        Duration waitTime = request.waitTime() != null ? request.waitTime() : runner.defaultWaitTime();
        Duration leaseTime = request.leaseTime();
        ReactiveLock reactive = ReactiveLock.of(lock);
        if (flux) {
            return Flux.defer(() -> {
                AtomicBoolean entered = new AtomicBoolean();
                Flux<Object> work = Flux.defer(() -> {
                    entered.set(true);
                    return Flux.from(proceed(invocation));
                });
                Flux<Object> held = waitTime == null
                        ? (leaseTime == null ? reactive.withLock(work) : reactive.withLock(leaseTime, work))
                        : (leaseTime == null ? reactive.tryWithLock(waitTime, work)
                                : reactive.tryWithLock(waitTime, leaseTime, work));
                return held.onErrorResume(e -> Flux.from(recover(e, entered.get(), plan, request, lock, waitTime,
                        target, args)));
            });
        }
        return Mono.defer(() -> {
            AtomicBoolean entered = new AtomicBoolean();
            Mono<Object> work = Mono.defer(() -> {
                entered.set(true);
                return Mono.from(proceed(invocation));
            });
            Mono<Object> held = waitTime == null
                    ? (leaseTime == null ? reactive.withLock(work) : reactive.withLock(leaseTime, work))
                    : (leaseTime == null ? reactive.tryWithLock(waitTime, work)
                            : reactive.tryWithLock(waitTime, leaseTime, work));
            return held.onErrorResume(e -> Mono.from(recover(e, entered.get(), plan, request, lock, waitTime,
                    target, args)));
        });
    }

    /**
     * Invokes the rest of the advice chain and the method, once per subscription: a clone of the
     * invocation each time, as the original can proceed only once.
     */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> proceed(MethodInvocation invocation) {
        MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;
        Object result;
        try {
            result = call.proceed();
        } catch (Throwable t) {
            return Mono.error(t);
        }
        return result == null ? Mono.empty() : (Publisher<Object>) result;
    }

    /**
     * What the caller gets for an error of the guarded publisher: this call's own "not acquired"
     * (only before the method was invoked) and "lease lost" are told with every name of the call,
     * and {@link WithLock#onNotAcquired()} decides about the first; any other error is passed on.
     */
    private static Publisher<Object> recover(Throwable error, boolean entered, LockPlan plan, LockRunner.Request request,
            DistributedLock lock, Duration waitTime, Object target, Object[] args) {
        if (!entered && error instanceof LockNotAcquiredException) {
            return fromCall(() -> plan.notAcquired(new LockNotAcquiredException(request.names(), waitTime, null),
                    target, args));
        }
        if (error instanceof LockLostException lost && !lost.lockNames().equals(request.names())
                && (lost.lockName().equals(lock.getName()) || request.names().contains(lost.lockName()))) {
            return Mono.error(new LockLostException(request.names(), lost.ownerId(), lost, false));
        }
        return Mono.error(error);
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> fromCall(Callable instead) {
        Object value;
        try {
            value = instead.call();
        } catch (Throwable t) {
            return Mono.error(t);
        }
        return value == null ? Mono.empty() : (Publisher<Object>) value;
    }

    /** What {@link LockPlan#notAcquired} is: a call that may throw anything. */
    @FunctionalInterface
    private interface Callable {
        Object call() throws Throwable;
    }
}
