package io.relock.spring;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.function.BiFunction;

import org.springframework.core.annotation.AliasFor;

import io.relock.DistributedLock;
import io.relock.Relock;

/**
 * Runs the annotated method while this client holds a distributed lock.
 *
 * <pre>{@code
 * @WithLock(name = "recharge", key = "#orderId", waitTime = "5s")
 * @Transactional
 * public void recharge(String orderId, long amount) { ... }
 * }</pre>
 *
 * <p><b>Which lock.</b> The lock's name is {@link #name()} ({@code ${…}} placeholders resolved),
 * followed by {@code ':'} and the value of {@link #key()}, a SpEL expression over the method's
 * parameters ({@code #orderId}, {@code #order.id}, {@code #p0}). A key that evaluates to a
 * collection or an array locks every element's name at once (a multi-lock, taken in sorted
 * order so that two callers never deadlock). A key that evaluates to {@code null}, a blank
 * string or an empty collection is an {@link IllegalArgumentException} before Redis is touched.
 * A {@code #name} in the key that is not one of the method's parameters fails the application's
 * start; parameter names need the {@code -parameters} compiler flag (without it, a {@code #name}
 * fails the start too: use {@code #p0}).
 *
 * <p><b>Order.</b> The lock is the outermost advice: it is taken before a {@code @Transactional}
 * on the same method opens its transaction and released after that transaction committed or
 * rolled back, so that the next holder reads what the last one committed.
 *
 * <p><b>Transactions.</b> A transaction that begins inside the call (this method's own
 * {@code @Transactional}, or one opened by code it calls) checks the lock just before it
 * commits, asking Redis: when the lock is gone (force-unlocked, expired, or reported lost by the
 * watchdog) the transaction rolls back and the caller gets a {@link LockLostException}. A loss
 * after that check, or a process paused between the check and the commit, is not caught; a
 * {@link Type#FENCED} lock's token ({@link RelockLocks.Held#token()}) in the SQL is what closes
 * that gap.
 *
 * <p><b>Failures.</b> When the lock is not acquired within {@link #waitTime()}, the method does
 * not run and {@link #onNotAcquired()} decides what the caller gets. When Redis fails while
 * acquiring, the method does not run and the caller gets the {@code io.relock.RelockException}.
 * An interrupt while waiting keeps the thread's interrupt flag and throws
 * {@link LockNotAcquiredException}. When the lease was lost while the method ran (the watchdog
 * could not renew it, or a fixed lease ran out), the caller gets a {@link LockLostException}
 * after the method returned, or from the commit of a transaction as above (with
 * {@code relock.on-lock-lost=log}: a warning in the log, and no check before commit); the method can ask
 * {@link RelockLocks#current()} whether its lock is still held. Nested calls on the same thread
 * with the same lock re-enter it.
 *
 * <p><b>Asynchronous returns.</b> The lock is held for the work the method returns, by an owner
 * that is not a thread, and no thread blocks on it:
 * <ul>
 * <li>{@code Mono}, {@code Flux} or {@code Publisher} (needs {@code io.relock:relock-reactor}):
 *     each subscription takes the lock, then invokes the method (and the advice inside it, a
 *     reactive {@code @Transactional} among it) holding it, and releases it when the method's
 *     publisher completes, errors or is cancelled, and so after a reactive transaction
 *     committed. The owner lives in the Reactor context, so a nested guarded call in the same
 *     pipeline re-enters, whichever thread runs it. A lost lease cancels the method's publisher
 *     (a reactive transaction then rolls back) and the subscriber gets {@link LockLostException},
 *     also with {@code relock.on-lock-lost=log}.</li>
 * <li>A Kotlin {@code suspend} function, which Spring's AOP runs as a {@code Mono}: held from
 *     the call until it returns or throws, released when the calling coroutine is cancelled.</li>
 * <li>{@code CompletableFuture} or {@code CompletionStage}: the lock is taken for an owner from
 *     {@code Relock.newOwnerId()}; the method runs once it is held, on the thread that completed
 *     the acquire (a Relock worker), and must not block; the lock is released when its stage
 *     completes, before the caller's future completes. Cancelling the caller's future cancels
 *     the wait, or else the method's stage.</li>
 * </ul>
 * Failures (a bad key, not acquired, Redis, a lost lease) arrive in the returned publisher or
 * future, never thrown by the call. {@link OnNotAcquired#SKIP} returns an empty publisher or a
 * future of {@code null} (a {@code Void} or {@code Optional} one, then empty); a fallback
 * returns the same type. Refused at start-up: {@link Type#FENCED} (its token is read through the
 * per-thread {@link RelockLocks#current()}), {@link #holdAtLeast()} on reactive returns, a fallback
 * on a {@code suspend} function, {@code SKIP} on a {@code suspend} function whose value is neither
 * {@code Unit} nor nullable, and any other future or publisher type (a plain {@code Future}, a
 * Kotlin {@code Flow}, RxJava's). {@link RelockLocks#current()} and the check before commit are
 * for blocking methods only.
 *
 * <p>Usable as a meta-annotation: an annotation of the application's own annotated with
 * {@code @WithLock} carries its settings, and {@link AliasFor} can expose some of them.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface WithLock {

    /**
     * Alias for {@link #name()}.
     *
     * @return the lock's logical name
     */
    @AliasFor("name")
    String value() default "";

    /**
     * The lock's logical name; {@code ${…}} placeholders are resolved against the environment.
     * Empty: the declaring class's name and the method's name ({@code com.acme.Billing.charge}).
     *
     * @return the lock's logical name
     */
    @AliasFor("value")
    String name() default "";

    /**
     * A SpEL expression over the method's parameters whose value is appended to the name after
     * a {@code ':'}; empty for one lock per method. See the type's documentation.
     *
     * @return the key expression
     */
    String key() default "";

    /**
     * The kind of lock.
     *
     * @return the lock type
     */
    Type type() default Type.REENTRANT;

    /**
     * How long to wait for the lock, in Spring's duration format ({@code "200ms"}, {@code "5s"},
     * {@code "PT1M"}, {@code ${…}} resolved). Empty: {@code relock.default-wait-time}, and without
     * it wait until acquired; {@code "0"} (or a negative one, as in core's {@code tryLock}): one
     * attempt, no waiting.
     *
     * @return the wait time
     */
    String waitTime() default "";

    /**
     * The lease, in Spring's duration format. Empty: no fixed lease; the watchdog renews the
     * lock while the method runs. A fixed lease is not renewed. A {@code Mono}, {@code Flux} or
     * {@code suspend} method that outlives it is cancelled when it ends; a blocking or
     * {@code CompletableFuture} method cannot be stopped and runs unprotected from then on. Either
     * way the caller gets a {@link LockLostException}.
     *
     * @return the lease time
     */
    String leaseTime() default "";

    /**
     * The minimum time the lock is held, in Spring's duration format ({@code "50s"},
     * {@code ${…}} resolved): when the method returns (or throws) earlier, the lock stays held
     * for the rest of that time, counted from the acquire: its lease is set to what is left and
     * the watchdog stops renewing it ({@code DistributedLock.unlock(Duration)}). A node whose
     * trigger fires a little later finds it held and, with {@link OnNotAcquired#SKIP}, skips: a
     * {@code @Scheduled} job runs once per period across all nodes, ShedLock's
     * {@code lockAtLeastFor}, while {@link #leaseTime()} plays {@code lockAtMostFor}. Empty or
     * {@code "0"}: none, the lock is released when the method returns. Checked at start-up: it
     * must not be longer than {@code leaseTime}, and a {@link Type#READ} lock cannot be kept; a
     * {@link #key()} that names several locks is refused at the call
     * ({@link IllegalArgumentException}, nothing taken). A nested call that re-enters the lock
     * releases it as usual; only the outermost hold is kept.
     * @return the minimum hold
     */
    String holdAtLeast() default "";

    /**
     * What the caller gets when the lock is not acquired within {@link #waitTime()}. Defaults to
     * {@link OnNotAcquired#THROW}, or to {@link OnNotAcquired#FALLBACK} when {@link #fallback()}
     * is set.
     *
     * @return the behaviour
     */
    OnNotAcquired onNotAcquired() default OnNotAcquired.THROW;

    /**
     * The name of a method of the same bean to call instead when the lock is not acquired. It
     * takes the same parameters, optionally followed by a {@link LockNotAcquiredException}, and
     * returns the same type. Checked when the application context starts.
     *
     * @return the fallback method's name, or empty for none
     */
    String fallback() default "";

    /** The kinds of lock {@code @WithLock} can take; each maps to one {@code io.relock.Relock} factory. */
    enum Type {
        /** {@code Relock.getLock}: reentrant, waiting by pub/sub. */
        REENTRANT(Relock::getLock),
        /** {@code Relock.getFairLock}: first come, first served. */
        FAIR(Relock::getFairLock),
        /** The read lock of {@code Relock.getReadWriteLock}: shared with other readers. */
        READ((relock, name) -> relock.getReadWriteLock(name).readLock()),
        /** The write lock of {@code Relock.getReadWriteLock}: exclusive. */
        WRITE((relock, name) -> relock.getReadWriteLock(name).writeLock()),
        /** {@code Relock.getFencedLock}: a token for every new holder, see {@link RelockLocks}. */
        FENCED(Relock::getFencedLock),
        /** {@code Relock.getSpinLock}: waits by backoff instead of pub/sub. */
        SPIN(Relock::getSpinLock),
        /** {@code Relock.getSimpleLock}: not reentrant. */
        SIMPLE(Relock::getSimpleLock);

        private final BiFunction<Relock, String, DistributedLock> factory;

        Type(BiFunction<Relock, String, DistributedLock> factory) {
            this.factory = factory;
        }

        /** The lock of this type named {@code name}, from {@code relock}'s factory. */
        DistributedLock lock(Relock relock, String name) {
            return factory.apply(relock, name);
        }
    }

    /** What happens when the lock is not acquired in time. */
    enum OnNotAcquired {
        /** Throw {@link LockNotAcquiredException}. */
        THROW,
        /**
         * Return without running the method: {@code null} for {@code void}, an empty
         * {@code Optional} for {@code Optional}, an empty {@code Mono} or {@code Flux}, a future
         * of {@code null} for a {@code CompletableFuture<Void>} (of an empty {@code Optional} for
         * a {@code CompletableFuture<Optional<…>>}). Other return types are refused at start-up.
         */
        SKIP,
        /** Call the method named by {@link WithLock#fallback()}. */
        FALLBACK
    }
}
