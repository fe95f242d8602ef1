package io.relock.reactor;

import io.relock.DistributedLock;
import io.relock.ListenerRegistration;
import io.relock.LockLostEvent;
import io.relock.LockLostException;
import io.relock.RelockException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;

/**
 * One hold of a lock taken by {@link ReactiveLock#acquire()} or
 * {@link ReactiveLock#tryAcquire(java.time.Duration)} for an owner id (not a thread), to be
 * released once with {@link #release()}, for example by {@code Mono.usingWhen}:
 *
 * <pre>{@code
 * Mono.usingWhen(orders.acquire(),
 *         hold -> ledger.post(entry),
 *         ReactiveHold::release);
 * }</pre>
 *
 * <p>Holds of one owner nest as reentrant acquires do: each stands for one acquire and its
 * release undoes that one. While it is held, the hold listens for its loss (lease ran out, renewal
 * failed, force-unlocked) and reports it through {@link #lost()}. Thread-safe.
 */
public final class ReactiveHold {

    private final DistributedLock lock;
    private final long owner;
    /** The fencing token, or null when the lock is not a {@link io.relock.FencedLock}. */
    private final Long token;
    private final AtomicBoolean releasing = new AtomicBoolean();
    /** Completes empty at release, or with a {@link LockLostException} when the hold is lost first. */
    private final CompletableFuture<Void> lost = new CompletableFuture<>();
    private final CompletableFuture<Void> released = new CompletableFuture<>();
    private volatile ListenerRegistration registration;

    private ReactiveHold(DistributedLock lock, long owner, Long token) {
        this.lock = lock;
        this.owner = owner;
        this.token = token;
    }

    /** A hold just acquired (with its fencing token, or null): from now on its loss is reported. */
    static ReactiveHold acquired(DistributedLock lock, long owner, Long token) {
        ReactiveHold hold = new ReactiveHold(lock, owner, token);
        hold.registration = lock.addLostListener(owner, hold::onLost);
        return hold;
    }

    private void onLost(LockLostEvent event) {
        if (!releasing.get()) {
            lost.completeExceptionally(new LockLostException(event.lockName(), owner, event.cause()));
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
     * Whether the hold has been lost and that was reported by {@link #lost()}.
     *
     * @return true once the loss is known
     */
    boolean isLost() {
        return lost.isCompletedExceptionally();
    }

    /**
     * A signal of this hold's loss: errors with {@link LockLostException} if the hold is lost
     * (its lease ran out, the watchdog could not renew it in time, or it was force-unlocked)
     * before {@link #release()} is called; completes empty once {@code release()} is called
     * without a loss reported first. Never emits a value. Use it to stop work that must not go
     * on without the lock, e.g. {@code work.takeUntilOther(hold.lost())}.
     *
     * @return the signal; each subscriber sees the same outcome
     */
    public Mono<Void> lost() {
        return Mono.fromFuture(lost, true);
    }

    /**
     * Releases this hold, once: the first subscription sends the release
     * ({@link DistributedLock#unlockAsync(long)}); every subscription, then or later, sees its
     * outcome. Subscribing is required: nothing happens until then. Cancelling a subscriber does
     * not stop a release in flight.
     *
     * <p>Outcomes: completes empty when released, and also when the hold had been lost and
     * {@link #lost()} had already reported it (nothing more to say). Errors with
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
                if (isLost()) {
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
