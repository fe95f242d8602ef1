package io.relock.reactor;

import io.relock.DistributedLock;
import io.relock.ListenerRegistration;
import io.relock.LockLostEvent;
import io.relock.LockLostException;
import io.relock.RelockException;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One hold of a lock taken by {@link ReactiveLock#acquire()} or
 * {@link ReactiveLock#tryAcquire(java.time.Duration)} for an owner id (not a thread), to be
 * released once with {@link #release()}, for example by {@code usingWhen}, with the work stopped
 * if the hold is lost:
 *
 * <pre>{@code
 * Flux.usingWhen(orders.acquire(),
 *         hold -> hold.whileHeld(ledger.postAll(entries)),
 *         ReactiveHold::release);
 * }</pre>
 *
 * <p>Holds of one owner nest as reentrant acquires do: each stands for one acquire and its
 * release undoes that one. While it is held, the hold listens for its loss and reports it through
 * {@link #lost()}; {@link #whileHeld(Flux)} and {@link #whileHeld(Mono)} cancel the work on a
 * loss. A hold is lost when the watchdog finds it gone from Redis (force-unlocked, expired while
 * Redis was unreachable) or cannot renew it in time, and, for a hold taken with a fixed lease,
 * when that lease runs out: nothing renews such a hold, so the hold counts its lease from the
 * acquire's reply and reports the loss when it is over (the lease began on Redis a little
 * earlier, when the acquire ran: up to the reply's latency; give the lease a margin). A
 * force-unlock of a fixed-lease hold is noticed only when its lease runs out or at the release.
 * Thread-safe.
 */
public final class ReactiveHold {

    private final DistributedLock lock;
    private final long owner;
    /** The fencing token, or null when the lock is not a {@link io.relock.FencedLock}. */
    private final Long token;
    /** The fixed lease in milliseconds, or -1 when the watchdog renews the hold. */
    private final long leaseMillis;
    private final AtomicBoolean releasing = new AtomicBoolean();
    /** Whether a subscriber of {@link #lost()} has been given the loss: the release need not say it again. */
    private final AtomicBoolean lossDelivered = new AtomicBoolean();
    /** Completes empty at release, or with a {@link LockLostException} when the hold is lost first. */
    private final CompletableFuture<Void> lost = new CompletableFuture<>();
    private final CompletableFuture<Void> released = new CompletableFuture<>();
    private volatile ListenerRegistration registration;
    /** The end of a fixed lease, scheduled; null for a watchdog-renewed hold. */
    private volatile Disposable leaseEnd;

    private ReactiveHold(DistributedLock lock, long owner, Long token, long leaseMillis) {
        this.lock = lock;
        this.owner = owner;
        this.token = token;
        this.leaseMillis = leaseMillis;
    }

    /**
     * A hold just acquired (with its fencing token, or null, and its fixed lease, or -1 for the
     * watchdog): from now on its loss is reported.
     */
    static ReactiveHold acquired(DistributedLock lock, long owner, Long token, long leaseMillis) {
        ReactiveHold hold = new ReactiveHold(lock, owner, token, leaseMillis);
        hold.registration = lock.addLostListener(owner, hold::onLost);
        if (leaseMillis > 0) {
            // Core watches only renewed holds: a fixed lease's end is this hold's to report.
            try {
                hold.leaseEnd = Schedulers.parallel().schedule(hold::onLeaseRunOut, leaseMillis, TimeUnit.MILLISECONDS);
            } catch (RuntimeException rejected) {
                hold.registration.close();
                throw rejected;
            }
        }
        return hold;
    }

    private void onLost(LockLostEvent event) {
        reportLoss(event.cause());
    }

    private void onLeaseRunOut() {
        reportLoss(new TimeoutException("its fixed lease of " + leaseMillis + " ms ran out"));
    }

    private void reportLoss(Throwable cause) {
        if (!releasing.get()) {
            lost.completeExceptionally(new LockLostException(lock.getName(), owner, cause));
        }
    }

    /**
     * The lock's name.
     *
     * @return the name
     */
    public String name() {
        return lock.getName();
    }

    /**
     * The owner id this hold belongs to: the pipeline's (see {@link ReactiveLock#ownerIn}) or
     * one from {@link io.relock.Relock#newOwnerId()}.
     *
     * @return the owner id
     */
    public long owner() {
        return owner;
    }

    /**
     * The fencing token of this hold, when the lock is a {@link io.relock.FencedLock}: it grows
     * with every new holder of the name (a re-entry keeps the holder's token); pass it with every
     * write the lock protects, so that the resource can refuse a late writer's lower token.
     *
     * @return the token, or empty when the lock hands out no tokens
     */
    public OptionalLong token() {
        return token == null ? OptionalLong.empty() : OptionalLong.of(token);
    }

    /**
     * Whether the hold has been lost and a subscriber of {@link #lost()} was told.
     *
     * @return true once the loss was delivered
     */
    boolean isLossDelivered() {
        return lossDelivered.get();
    }

    /**
     * A signal of this hold's loss: errors with {@link LockLostException} if the hold is lost
     * (its lease ran out, the watchdog could not renew it in time, or it was force-unlocked)
     * before {@link #release()} is called; completes empty once {@code release()} is called
     * without a loss reported first. Never emits a value. To stop work on a loss, use
     * {@link #whileHeld(Flux)} or {@link #whileHeld(Mono)}: Reactor's
     * {@code work.takeUntilOther(hold.lost())} passes the error on but does <em>not</em> cancel
     * {@code work}, which then goes on without the lock.
     *
     * @return the signal; each subscriber sees the same outcome
     */
    public Mono<Void> lost() {
        return Mono.fromFuture(lost, true).doOnError(loss -> lossDelivered.set(true));
    }

    /**
     * {@code work}, stopped if this hold is lost: on a loss reported by {@link #lost()} the
     * subscription to {@code work} is cancelled (its {@code doOnCancel} runs, nothing more is
     * requested from it, and a value it still emits is dropped), and the result errors with
     * {@link LockLostException}. A loss already reported when the result is subscribed to
     * errors at once, without subscribing to {@code work}. Otherwise the result is
     * {@code work}'s values, completion and error; cancelling the result cancels {@code work}.
     * It does not release the hold: {@code Flux.usingWhen(lock.acquire(), hold ->
     * hold.whileHeld(work), ReactiveHold::release)} does both.
     *
     * @param <T> the type of the work's values
     * @param work what to run while the hold lasts
     * @return the work, cancelled on a loss
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Flux<T> whileHeld(Flux<T> work) {
        Objects.requireNonNull(work, "work must not be null");
        return Flux.defer(() -> {
            AtomicReference<Throwable> loss = new AtomicReference<>();
            // takeUntilOther cancels its source when the other publisher emits (not when it
            // errors): the loss is turned into a value, then back into the error.
            Mono<Throwable> lossSeen = lost().then(Mono.<Throwable>never())
                    .onErrorResume(Mono::just)
                    .doOnNext(loss::set);
            return work.takeUntilOther(lossSeen)
                    .concatWith(Mono.defer(() -> {
                        Throwable failure = loss.get();
                        return failure == null ? Mono.<T>empty() : Mono.<T>error(failure);
                    }));
        });
    }

    /**
     * {@code work}, stopped if this hold is lost, as {@link #whileHeld(Flux)}: on a loss the
     * subscription to {@code work} is cancelled and the result errors with
     * {@link LockLostException}.
     *
     * @param <T> the type of the work's value
     * @param work what to run while the hold lasts
     * @return the work, cancelled on a loss
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Mono<T> whileHeld(Mono<T> work) {
        Objects.requireNonNull(work, "work must not be null");
        // Whichever signals first wins and the other is cancelled: the loss's error cancels work.
        return work.or(lost().then(Mono.never()));
    }

    /**
     * Releases this hold, once: the first subscription sends the release
     * ({@link DistributedLock#unlockAsync(long)}); every subscription, then or later, sees its
     * outcome. Subscribing is required: nothing happens until then. Cancelling a subscriber does
     * not stop a release in flight.
     *
     * <p>Outcomes: completes empty when released, and also when the hold had been lost and
     * {@link #lost()} had already delivered that to a subscriber (as {@link #whileHeld(Flux)}
     * does; nothing more to say). Errors with
     * {@link LockLostException} if Redis no longer had the hold for this owner (lost unnoticed
     * before the release), or with the {@link RelockException} of the release when Redis failed;
     * the hold then stays on Redis and is renewed by the watchdog until an unlock of that owner
     * succeeds or the lease runs out.
     *
     * @return completes when the release is done
     */
    public Mono<Void> release() {
        return Mono.defer(() -> {
            if (releasing.compareAndSet(false, true)) {
                ListenerRegistration listening = registration;
                if (listening != null) {
                    listening.close();
                }
                Disposable timer = leaseEnd;
                if (timer != null) {
                    timer.dispose();
                }
                lost.complete(null);
                sendRelease();
            }
            return Mono.fromFuture(released, true);
        });
    }

    private void sendRelease() {
        CompletableFuture<Void> unlocking;
        try {
            unlocking = lock.unlockAsync(owner).toCompletableFuture();
        } catch (RuntimeException failure) {
            released.completeExceptionally(failure);
            return;
        }
        unlocking.whenComplete((ignored, failure) -> {
            if (failure == null) {
                released.complete(null);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof IllegalMonitorStateException notHeld) {
                if (isLossDelivered()) {
                    released.complete(null);
                } else {
                    released.completeExceptionally(new LockLostException(lock.getName(), owner, notHeld));
                }
            } else {
                released.completeExceptionally(cause);
            }
        });
    }

    @Override
    public String toString() {
        return "ReactiveHold[" + lock.getName() + ", owner " + owner + "]";
    }
}
