package io.relock.reactor;

import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import io.relock.Relock;
import io.relock.RelockException;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * A {@code Mono}/{@code Flux} face over any {@link DistributedLock}: holds owned by a pipeline,
 * not by a thread, taken and released without blocking any thread.
 *
 * <pre>{@code
 * ReactiveLock account = ReactiveLock.of(relock.getLock("account:42"));
 * Mono<Receipt> receipt = account.withLock(ledger.debit(42, amount).then(ledger.receipt(42)));
 * }</pre>
 *
 * <h2>Holding</h2>
 * {@link #withLock(Mono)} and its forms take the lock when subscribed to (waiting as long as it
 * takes, the lease renewed by the watchdog), then subscribe to the work holding it, and release
 * it when the work completes, errors or is cancelled. A {@code Mono} result signals after the
 * release (its value, its completion, or the work's error); a {@code Flux} result passes the
 * work's values on as they come, while the lock is held, and completes or errors after the
 * release. {@link #tryWithLock(Duration, Mono)} gives up after a wait with a
 * {@link LockNotAcquiredException}. {@link #acquire()} and {@link #tryAcquire(Duration)} return
 * the {@link ReactiveHold} itself, for {@code Mono.usingWhen}-shaped code; a
 * {@link FencedLock}'s hold carries its fencing token ({@link ReactiveHold#token()}).
 *
 * <h2>The owner is the pipeline</h2>
 * A hold belongs to an owner id kept in the subscriber's Reactor {@link Context} (see
 * {@link #ownerIn(ContextView)} and {@link #ownedBy(long)}). A {@code withLock} finds the owner
 * there, or makes a new one with {@link Relock#newOwnerId()}, and writes it into the context of
 * its work. So a nested {@code withLock} on the same name inside the work re-enters (the hold
 * count becomes 2) whichever thread runs it, while another subscription, with a context of its
 * own, is another owner and waits. One owner id serves every lock of the pipeline. Everything
 * inside the work shares the hold, concurrent branches included, as the statements of one
 * thread share a thread's hold.
 *
 * <h2>Cancellation</h2>
 * Cancelled while waiting, the wait is abandoned (it leaves Redis's queue); a hold won in a race
 * with the cancel is released by Relock. Cancelled while holding, the work is cancelled and the
 * hold released. After a cancel nobody is listening: a release that fails then goes to Reactor's
 * {@link reactor.core.publisher.Hooks#onErrorDropped dropped-error hook}, and the hold ends with
 * its lease.
 *
 * <h2>Lease loss</h2>
 * While the lock is held, its loss cancels the work, for a {@code Mono} and a {@code Flux} alike:
 * the subscription to the work is cancelled (its {@code doOnCancel} runs, nothing more is
 * requested from it, and a value it still emits is dropped), the hold is released (once; Redis
 * has usually dropped it already), and the result errors with {@link LockLostException}. A
 * {@code Flux} result may have passed on values before the loss, never after it. A hold is lost
 * when:
 * <ul>
 *   <li>the watchdog finds it gone from Redis (another client force-unlocked it, or it expired
 *       while Redis was unreachable) or cannot renew it before its lease runs out: noticed at
 *       the watchdog's next renewal, at most {@code watchdogTimeout / 3} after it went;</li>
 *   <li>a fixed {@code leaseTime} runs out: counted by this face from the acquire's reply, so
 *       the work is stopped at most that reply's latency after Redis dropped the hold (give the
 *       lease a margin). A force-unlock of a fixed-lease hold is noticed only then, or at the
 *       release.</li>
 * </ul>
 * A loss noticed only at the release (Redis no longer had the hold) errors the same way.
 *
 * <h2>Failures</h2>
 * When Redis fails while acquiring, the result errors with the {@link RelockException} and the
 * work is not subscribed to. When the release fails after the work completed, the result errors
 * with the release's {@code RelockException} (a {@code Mono}'s value is then not emitted); after
 * the work errored, the release's failure is {@linkplain Throwable#addSuppressed suppressed} in
 * the work's error. Bad arguments are rejected when the method is called, before any
 * subscription.
 *
 * <h2>Threads</h2>
 * The work is subscribed to on the thread that completed the acquire (one of Relock's or
 * Lettuce's; for an uncontended acquire usually the client's I/O thread, which reads Redis's
 * replies), and the result signals on the thread that completed the release. Work that blocks,
 * and above all work that makes a blocking call of Relock ({@code lock.getHoldCount()},
 * {@code isHeldByThread}, {@code relock.getLockInfo}, {@code lock()}), must move off that
 * thread first: {@code lock.withLock(Mono.fromCallable(blocking).subscribeOn(Schedulers.boundedElastic()))},
 * or {@code publishOn(Schedulers.boundedElastic())} before the blocking step. A blocking call of
 * Relock made on one of its own I/O threads would wait for a reply that thread must read; it
 * fails at once with an {@link IllegalStateException} saying so (an acquire sends nothing
 * then). Instances are immutable and thread-safe; one may serve any number of pipelines.
 */
public final class ReactiveLock {

    /** The Reactor {@link Context} key of the owner id; private, so only this class writes it. */
    private static final Object OWNER_KEY = new Object() {
        @Override
        public String toString() {
            return "io.relock.reactor.owner";
        }
    };

    /** Lease argument meaning "the watchdog renews". */
    private static final long WATCHDOG = -1;

    /** What {@code acquisition}'s hand-over slot holds once the subscriber has the hold, or has left. */
    private static final Object DELIVERED = new Object();
    private static final Object CANCELLED = new Object();

    private final DistributedLock lock;

    private ReactiveLock(DistributedLock lock) {
        this.lock = lock;
    }

    /**
     * The reactive face of {@code lock}: any kind of {@link DistributedLock} (reentrant, fair,
     * fenced, read or write lock, multi-lock, RedLock).
     *
     * @param lock the lock
     * @return its reactive face
     * @throws NullPointerException if {@code lock} is null
     */
    public static ReactiveLock of(DistributedLock lock) {
        return new ReactiveLock(Objects.requireNonNull(lock, "lock must not be null"));
    }

    /**
     * The owner id a pipeline's context carries, if any: the one a {@code withLock} upstream of
     * the caller holds its locks for, or one written with {@link #ownedBy(long)}.
     *
     * @param context a subscriber's context, e.g. from {@code Mono.deferContextual}
     * @return the owner id, or empty when the context has none
     * @throws NullPointerException if {@code context} is null
     */
    public static OptionalLong ownerIn(ContextView context) {
        Objects.requireNonNull(context, "context must not be null");
        Object owner = context.getOrDefault(OWNER_KEY, null);
        return owner instanceof Long id ? OptionalLong.of(id) : OptionalLong.empty();
    }

    /**
     * A context change for {@code contextWrite} that makes {@code ownerId} the owner of the
     * holds taken upstream of it:
     * {@code lock.withLock(work).contextWrite(ReactiveLock.ownedBy(owner))}. Use it to share
     * holds between pipelines that are one unit of work (two subscriptions with the same owner
     * re-enter each other's holds), or to release with the plain lock's
     * {@code unlockAsync(ownerId)}. Prefer ids from {@link Relock#newOwnerId()}; a positive id is
     * a thread's id, and that thread of the client would count as the owner too.
     *
     * @param ownerId the owner id
     * @return a function that puts it into a context
     */
    public static Function<Context, Context> ownedBy(long ownerId) {
        return context -> context.put(OWNER_KEY, ownerId);
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
     * The lock this is a face of.
     *
     * @return the lock
     */
    public DistributedLock lock() {
        return lock;
    }

    /**
     * Runs {@code work} holding the lock, waiting as long as it takes; the watchdog renews the
     * lease while the work runs. See the class comment for ownership, cancellation, lease loss
     * and failures.
     *
     * @param <T> the type of the work's value
     * @param work what to subscribe to while holding the lock
     * @return the work's value, emitted after the release; errors with the work's error, with
     *     {@link LockLostException} if the hold was lost, or with {@link RelockException} if
     *     Redis failed
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Mono<T> withLock(Mono<T> work) {
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, false, 0, WATCHDOG, null);
    }

    /**
     * Runs {@code work} holding the lock for at most {@code leaseTime}, waiting as long as it
     * takes. There is no renewal: if the work outlasts the lease, Redis drops the hold, the work
     * is cancelled when the lease runs out (counted from the acquire's reply), and the result
     * errors with {@link LockLostException}.
     *
     * @param <T> the type of the work's value
     * @param leaseTime how long a hold lasts at most; at least 1 ms
     * @param work what to subscribe to while holding the lock
     * @return as {@link #withLock(Mono)}
     * @throws NullPointerException if {@code leaseTime} or {@code work} is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public <T> Mono<T> withLock(Duration leaseTime, Mono<T> work) {
        long lease = leaseMillis(leaseTime);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, false, 0, lease, null);
    }

    /**
     * Runs {@code work} holding the lock, waiting as long as it takes; the watchdog renews the
     * lease. The work's values pass on while the lock is held; completion and errors come after
     * the release. If the hold is lost, the subscription to {@code work} is cancelled (no value
     * passes on after the loss) and the result errors with {@link LockLostException}.
     *
     * @param <T> the type of the work's values
     * @param work what to subscribe to while holding the lock
     * @return the work's values; errors as {@link #withLock(Mono)}
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Flux<T> withLock(Flux<T> work) {
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, false, 0, WATCHDOG, null);
    }

    /**
     * Runs {@code work} holding the lock for at most {@code leaseTime}, as
     * {@link #withLock(Duration, Mono)}: when the lease runs out the subscription to
     * {@code work} is cancelled and the result errors with {@link LockLostException}.
     *
     * @param <T> the type of the work's values
     * @param leaseTime how long a hold lasts at most; at least 1 ms
     * @param work what to subscribe to while holding the lock
     * @return the work's values; errors as {@link #withLock(Mono)}
     * @throws NullPointerException if {@code leaseTime} or {@code work} is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public <T> Flux<T> withLock(Duration leaseTime, Flux<T> work) {
        long lease = leaseMillis(leaseTime);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, false, 0, lease, null);
    }

    /**
     * Runs {@code work} holding the lock if it can be acquired within {@code wait}; the watchdog
     * renews the lease.
     *
     * @param <T> the type of the work's value
     * @param wait how long to wait for the lock; zero or less for one attempt without waiting
     * @param work what to subscribe to while holding the lock
     * @return as {@link #withLock(Mono)}, or an error {@link LockNotAcquiredException} (naming the
     *     lock and the wait) if another owner held the lock all that time, without subscribing to
     *     {@code work}
     * @throws NullPointerException if {@code wait} or {@code work} is null
     */
    public <T> Mono<T> tryWithLock(Duration wait, Mono<T> work) {
        long waitMillis = waitMillis(wait);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, true, waitMillis, WATCHDOG, wait);
    }

    /**
     * Runs {@code work} holding the lock for at most {@code leaseTime} if it can be acquired
     * within {@code wait}.
     *
     * @param <T> the type of the work's value
     * @param wait how long to wait for the lock; zero or less for one attempt without waiting
     * @param leaseTime how long a hold lasts at most (no renewal); at least 1 ms
     * @param work what to subscribe to while holding the lock
     * @return as {@link #tryWithLock(Duration, Mono)}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public <T> Mono<T> tryWithLock(Duration wait, Duration leaseTime, Mono<T> work) {
        long waitMillis = waitMillis(wait);
        long lease = leaseMillis(leaseTime);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, true, waitMillis, lease, wait);
    }

    /**
     * Runs {@code work} holding the lock if it can be acquired within {@code wait}; the watchdog
     * renews the lease.
     *
     * @param <T> the type of the work's values
     * @param wait how long to wait for the lock; zero or less for one attempt without waiting
     * @param work what to subscribe to while holding the lock
     * @return as {@link #withLock(Flux)}, or an error {@link LockNotAcquiredException} if the wait
     *     ran out, without subscribing to {@code work}
     * @throws NullPointerException if {@code wait} or {@code work} is null
     */
    public <T> Flux<T> tryWithLock(Duration wait, Flux<T> work) {
        long waitMillis = waitMillis(wait);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, true, waitMillis, WATCHDOG, wait);
    }

    /**
     * Runs {@code work} holding the lock for at most {@code leaseTime} if it can be acquired
     * within {@code wait}.
     *
     * @param <T> the type of the work's values
     * @param wait how long to wait for the lock; zero or less for one attempt without waiting
     * @param leaseTime how long a hold lasts at most (no renewal); at least 1 ms
     * @param work what to subscribe to while holding the lock
     * @return as {@link #tryWithLock(Duration, Flux)}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public <T> Flux<T> tryWithLock(Duration wait, Duration leaseTime, Flux<T> work) {
        long waitMillis = waitMillis(wait);
        long lease = leaseMillis(leaseTime);
        Objects.requireNonNull(work, "work must not be null");
        return holding(work, true, waitMillis, lease, wait);
    }

    /**
     * Acquires the lock when subscribed to, waiting as long as it takes, with the watchdog, for
     * the owner in the subscriber's context (or, if there is none, a new owner for this
     * subscription), and emits the hold. The caller must {@link ReactiveHold#release() release}
     * it; {@code Mono.usingWhen(lock.acquire(), hold -> work, ReactiveHold::release)} does.
     * Cancelled while waiting, the wait is abandoned and nothing stays held. The hold is not
     * written into any context: work that should re-enter it needs
     * {@code contextWrite(ReactiveLock.ownedBy(hold.owner()))}. Nothing stops the work on a
     * loss unless it is wrapped in {@link ReactiveHold#whileHeld(Flux)} (or its {@code Mono}
     * form): {@code Flux.usingWhen(lock.acquire(), hold -> hold.whileHeld(work),
     * ReactiveHold::release)}.
     *
     * @return the hold; errors with {@link RelockException} if Redis fails
     */
    public Mono<ReactiveHold> acquire() {
        return Mono.deferContextual(context -> acquisition(ownerOf(context), false, 0, WATCHDOG));
    }

    /**
     * Acquires the lock for at most {@code leaseTime} (no renewal), as {@link #acquire()}; the
     * hold's {@link ReactiveHold#lost()} reports the lease's end as a loss.
     *
     * @param leaseTime how long the hold lasts at most; at least 1 ms
     * @return the hold; errors with {@link RelockException} if Redis fails
     * @throws NullPointerException if {@code leaseTime} is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public Mono<ReactiveHold> acquire(Duration leaseTime) {
        long lease = leaseMillis(leaseTime);
        return Mono.deferContextual(context -> acquisition(ownerOf(context), false, 0, lease));
    }

    /**
     * Acquires the lock if it becomes free within {@code wait}, with the watchdog, as
     * {@link #acquire()}.
     *
     * @param wait how long to wait; zero or less for one attempt without waiting
     * @return the hold, or empty if another owner held the lock all that time; errors with
     *     {@link RelockException} if Redis fails (never empty for that)
     * @throws NullPointerException if {@code wait} is null
     */
    public Mono<ReactiveHold> tryAcquire(Duration wait) {
        long waitMillis = waitMillis(wait);
        return Mono.deferContextual(context -> acquisition(ownerOf(context), true, waitMillis, WATCHDOG));
    }

    /**
     * Acquires the lock for at most {@code leaseTime} (no renewal) if it becomes free within
     * {@code wait}, as {@link #acquire()}.
     *
     * @param wait how long to wait; zero or less for one attempt without waiting
     * @param leaseTime how long the hold lasts at most; at least 1 ms
     * @return the hold, or empty if the wait ran out; errors with {@link RelockException} if
     *     Redis fails
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code leaseTime} is under 1 ms or overflows milliseconds
     */
    public Mono<ReactiveHold> tryAcquire(Duration wait, Duration leaseTime) {
        long waitMillis = waitMillis(wait);
        long lease = leaseMillis(leaseTime);
        return Mono.deferContextual(context -> acquisition(ownerOf(context), true, waitMillis, lease));
    }

    @Override
    public String toString() {
        return "ReactiveLock[" + lock.getName() + "]";
    }

    // ---- holding ------------------------------------------------------------------------------

    private <T> Mono<T> holding(Mono<T> work, boolean bounded, long waitMillis, long lease, Duration wait) {
        return Mono.deferContextual(context -> {
            long owner = ownerOf(context);
            Mono<T> owned = work.contextWrite(ownedBy(owner));
            return acquired(acquisition(owner, bounded, waitMillis, lease), wait)
                    .flatMap(hold -> inside(hold, owned));
        });
    }

    private <T> Flux<T> holding(Flux<T> work, boolean bounded, long waitMillis, long lease, Duration wait) {
        return Flux.deferContextual(context -> {
            long owner = ownerOf(context);
            Flux<T> owned = work.contextWrite(ownedBy(owner));
            return acquired(acquisition(owner, bounded, waitMillis, lease), wait)
                    .flatMapMany(hold -> inside(hold, owned));
        });
    }

    /** The hold, or for a bounded wait ({@code wait} not null) an error if none was won. */
    private Mono<ReactiveHold> acquired(Mono<ReactiveHold> acquisition, Duration wait) {
        return wait == null
                ? acquisition
                : acquisition.switchIfEmpty(Mono.error(() -> new LockNotAcquiredException(name(), wait)));
    }

    /** The work under the hold: stopped by the hold's loss, the hold released however it ends. */
    private static <T> Mono<T> inside(ReactiveHold hold, Mono<T> work) {
        return hold.whileHeld(work)
                .onErrorResume(failure -> releaseAfter(hold, failure))
                .flatMap(value -> hold.release().thenReturn(value))
                .switchIfEmpty(Mono.defer(() -> hold.release().then(Mono.<T>empty())))
                .doOnCancel(() -> releaseDetached(hold));
    }

    private static <T> Flux<T> inside(ReactiveHold hold, Flux<T> work) {
        return hold.whileHeld(work)
                .onErrorResume(failure -> releaseAfter(hold, failure))
                .concatWith(Mono.defer(() -> hold.release().then(Mono.<T>empty())))
                .doOnCancel(() -> releaseDetached(hold));
    }

    /** Releases after the work failed, then passes the failure on, a failed release suppressed in it. */
    private static <T> Mono<T> releaseAfter(ReactiveHold hold, Throwable failure) {
        return hold.release()
                .onErrorResume(releaseFailure -> {
                    if (releaseFailure != failure) {
                        failure.addSuppressed(releaseFailure);
                    }
                    return Mono.empty();
                })
                .then(Mono.error(failure));
    }

    /** Releases with nobody left to tell: a failure goes to Reactor's dropped-error hook. */
    private static void releaseDetached(ReactiveHold hold) {
        hold.release().subscribe(null, failure -> Operators.onErrorDropped(failure, Context.empty()));
    }

    // ---- acquiring ----------------------------------------------------------------------------

    private static long ownerOf(ContextView context) {
        OptionalLong owner = ownerIn(context);
        return owner.isPresent() ? owner.getAsLong() : Relock.newOwnerId();
    }

    /**
     * One acquire for {@code owner}: the hold, or empty when a bounded wait ran out. A cancel
     * cancels the acquire's stage (Relock leaves the queue and releases a hold won in the race);
     * a hold that completes after the subscriber left is released: discarded by the sink, or,
     * when the sink dropped it, found by the cancel in the hand-over slot.
     */
    private Mono<ReactiveHold> acquisition(long owner, boolean bounded, long waitMillis, long lease) {
        return Mono.defer(() -> acquisition(owner, bounded, waitMillis, lease, new AtomicReference<>()));
    }

    /**
     * {@code handed} holds the hold given to the sink until the subscriber has it (then
     * {@link #DELIVERED}), or {@link #CANCELLED}. A success that races the cancel can be dropped
     * by the sink ({@code onNextDropped}, which no discard hook sees): the cancel, which runs
     * after, finds the hold there and releases it.
     */
    private Mono<ReactiveHold> acquisition(long owner, boolean bounded, long waitMillis, long lease,
            AtomicReference<Object> handed) {
        return Mono.<ReactiveHold>create(sink -> {
            CompletableFuture<?> acquiring;
            try {
                acquiring = start(owner, bounded, waitMillis, lease);
            } catch (RuntimeException failure) {
                sink.error(failure);
                return;
            }
            sink.onCancel(() -> {
                acquiring.cancel(false);
                if (handed.getAndSet(CANCELLED) instanceof ReactiveHold undelivered) {
                    releaseDetached(undelivered);
                }
            });
            acquiring.whenComplete((result, failure) -> {
                if (failure != null) {
                    if (!acquiring.isCancelled()) {
                        sink.error(unwrap(failure));
                    }
                } else if (Boolean.FALSE.equals(result) || (bounded && result == null)) {
                    sink.success();
                } else {
                    ReactiveHold hold;
                    try {
                        hold = ReactiveHold.acquired(lock, owner, result instanceof Long token ? token : null, lease);
                    } catch (RuntimeException listening) {
                        // The loss could not be watched (the client is closing): give the hold back.
                        lock.unlockAsync(owner);
                        sink.error(listening);
                        return;
                    }
                    if (handed.compareAndSet(null, hold)) {
                        sink.success(hold);
                    } else {
                        releaseDetached(hold);
                    }
                }
            });
        }).doOnNext(hold -> handed.compareAndSet(hold, DELIVERED))
                .doOnDiscard(ReactiveHold.class, ReactiveLock::releaseDetached);
    }

    /**
     * The lock's cancellable acquire stage: a fenced lock's completes with the token (null when
     * a bounded wait ran out), any other's with whether it was acquired (or null, unbounded).
     */
    private CompletableFuture<?> start(long owner, boolean bounded, long waitMillis, long lease) {
        if (lock instanceof FencedLock fenced) {
            return bounded
                    ? fenced.tryLockAndGetTokenAsync(waitMillis, lease, TimeUnit.MILLISECONDS, owner)
                            .toCompletableFuture()
                    : fenced.lockAndGetTokenAsync(lease, TimeUnit.MILLISECONDS, owner).toCompletableFuture();
        }
        return bounded
                ? lock.tryLockAsync(waitMillis, lease, TimeUnit.MILLISECONDS, owner).toCompletableFuture()
                : lock.lockAsync(lease, TimeUnit.MILLISECONDS, owner).toCompletableFuture();
    }

    private static Throwable unwrap(Throwable failure) {
        return (failure instanceof CompletionException || failure instanceof CancellationException)
                && failure.getCause() != null ? failure.getCause() : failure;
    }

    // ---- arguments ----------------------------------------------------------------------------

    private static long waitMillis(Duration wait) {
        Objects.requireNonNull(wait, "wait must not be null");
        try {
            return wait.toMillis();
        } catch (ArithmeticException tooLong) {
            return wait.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static long leaseMillis(Duration leaseTime) {
        Objects.requireNonNull(leaseTime, "leaseTime must not be null");
        long millis;
        try {
            millis = leaseTime.toMillis();
        } catch (ArithmeticException tooLong) {
            throw new IllegalArgumentException("leaseTime overflows milliseconds: " + leaseTime, tooLong);
        }
        if (millis < 1) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime);
        }
        return millis;
    }
}
