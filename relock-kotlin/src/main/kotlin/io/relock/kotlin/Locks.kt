@file:JvmName("RelockCoroutines")

package io.relock.kotlin

import io.relock.DistributedLock
import io.relock.FencedLock
import io.relock.ListenerRegistration
import io.relock.LockListener
import io.relock.LockLostEvent
import io.relock.LockLostException
import io.relock.LockNotAcquiredException
import io.relock.RelockException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.NANOSECONDS
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.toJavaDuration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.future.await
import kotlinx.coroutines.job
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/**
 * Runs [block] holding this lock, suspending (never blocking a thread) until the lock is
 * acquired, and releases it when the block completes, fails or is cancelled.
 *
 * **Name.** Not `withLock`: [DistributedLock] has members `withLock(Runnable)` and
 * `withLock(Supplier)`, and Kotlin always prefers a member to an extension, so `lock.withLock {}`
 * would run the lambda through the blocking Java method, owned by the thread.
 *
 * **Owner.** The hold belongs to the [LockOwner] of the calling coroutine's context; without
 * one, a new owner is created and the block runs with it in its context. So a nested `withLockSuspending`
 * on the same lock re-enters (one more hold, released by its own end) across suspension points
 * and dispatcher switches (`withContext(Dispatchers.IO)`), and child coroutines started in the
 * block share the hold; a coroutine started with `+ LockOwner.new()` is an owner of its own and
 * waits for the lock like any other (see [LockOwner]).
 *
 * **Waiting.** With `wait == null` (or [Duration.INFINITE]) this waits as long as it takes;
 * with a `wait`, it waits at most that long and then throws [LockNotAcquiredException] (use
 * [tryWithLockSuspending] to get `null` instead); a `wait` of zero or less is one attempt without
 * waiting. Cancelling the coroutine while it waits gives the wait up at once: it leaves the
 * lock's queue, a hold that was granted in a race with the cancel is released, and the
 * [CancellationException] is rethrown; the block does not run.
 *
 * **Lease.** With `lease == null` the client's watchdog renews the hold while the block runs
 * ([io.relock.RelockConfig.watchdogTimeout]). With a `lease` the hold ends when the lease does,
 * whether the block is done or not: the block is then stopped as for a loss (below). The lease
 * is counted from the acquire's reply, so the block is cancelled at most that reply's latency
 * after Redis dropped the hold; give the lease a margin.
 *
 * **Losing the hold.** If the watchdog finds the hold gone (force-unlocked, expired while Redis
 * was unreachable) or cannot renew it in time, at its next renewal (at most
 * `watchdogTimeout / 3` later), or when a fixed `lease` runs out, the block's scope is cancelled
 * with a [CancellationException] whose cause is a [LockLostException] (so its suspension points
 * throw, and its child coroutines are cancelled: cancellation is cooperative, code that never
 * suspends nor checks `isActive` runs on), and `withLockSuspending` throws that
 * [LockLostException] once the block has ended, even if the block caught the cancellation and
 * returned. A force-unlock of a fixed-lease hold is noticed only when the lease runs out, or at
 * the release. Locks that cannot report lost holds (a [DistributedLock] not made by
 * [io.relock.Relock]) are not watched, except for a fixed lease's end.
 *
 * **Threads.** The block runs on the calling coroutine's dispatcher. A blocking call inside it
 * (`lock.holdCount`, `isHeldByThread`, `relock.getLockInfo`) blocks that dispatcher's thread:
 * wrap it in `withContext(Dispatchers.IO)`. Under `Dispatchers.Unconfined` the block resumes on
 * the thread that completed the acquire, often Relock's own I/O thread, where a blocking call of
 * Relock would wait for a reply that thread must read: it fails at once with an
 * [IllegalStateException] instead.
 *
 * **Release.** The release runs in a [NonCancellable] context, so a cancelled block still
 * releases. If the release fails, its exception is suppressed onto the block's failure when
 * the block failed, and thrown otherwise (the value is then lost).
 *
 * ```kotlin
 * val lock = relock.getLock("order:42")
 * val receipt = lock.withLockSuspending(wait = 5.seconds) { chargeOrder(42) }
 * ```
 *
 * @param T the block's result type
 * @param wait how long to wait for the lock; `null` to wait as long as it takes
 * @param lease how long the hold lasts without renewal; `null` for the watchdog
 * @param block what to run while holding the lock, in a scope that ends before the release
 * @return what [block] returned
 * @throws LockNotAcquiredException if `wait` is given and the lock was not acquired within it
 * @throws LockLostException if the hold was lost while the block ran
 * @throws IllegalArgumentException if `lease` is not null and not a finite duration of at least
 *     1 ms; nothing is then sent to Redis
 * @throws IllegalMonitorStateException if the hold was gone by the release without a loss
 *     reported first (a fixed-lease hold force-unlocked while the block ran)
 * @throws RelockException if Redis fails while acquiring (the block does not run) or releasing
 * @throws CancellationException if the calling coroutine is cancelled
 */
public suspend fun <T> DistributedLock.withLockSuspending(
    wait: Duration? = null,
    lease: Duration? = null,
    block: suspend CoroutineScope.() -> T,
): T {
    val outcome = lockAndRun(wait, lease) { block() }
    if (outcome === NotAcquired) {
        throw LockNotAcquiredException(name, checkNotNull(wait) { "an unbounded wait ended without the lock" }.toJavaDuration())
    }
    @Suppress("UNCHECKED_CAST")
    return outcome as T
}

/**
 * Runs [block] holding this lock if it can be acquired within [wait], and returns `null`
 * otherwise (the block does not run). Everything else is as [withLockSuspending]: the owner, re-entry,
 * children sharing the hold, cancellation, lease loss and release.
 *
 * A `null` result is ambiguous when [T] is itself nullable: a block that returned `null` and a
 * lock that was not acquired look alike. Return a non-null value (`Unit`, `true`, a wrapper)
 * when the difference matters, or use [withLockSuspending] with a `wait`, which throws
 * [LockNotAcquiredException] instead.
 *
 * ```kotlin
 * lock.tryWithLockSuspending { sendDailyReport() } ?: log.info("another node is sending it")
 * ```
 *
 * @param T the block's result type
 * @param wait how long to wait; the default, zero (as any duration of zero or less), is one
 *     attempt without waiting; [Duration.INFINITE] waits as long as it takes
 * @param lease how long the hold lasts without renewal; `null` for the watchdog
 * @param block what to run while holding the lock
 * @return what [block] returned, or `null` if the lock was not acquired within [wait]
 * @throws LockLostException if the hold was lost while the block ran
 * @throws IllegalArgumentException if `lease` is invalid (see [withLockSuspending])
 * @throws IllegalMonitorStateException if the hold was gone by the release (see [withLockSuspending])
 * @throws RelockException if Redis fails (never `null` for that)
 * @throws CancellationException if the calling coroutine is cancelled
 */
public suspend fun <T> DistributedLock.tryWithLockSuspending(
    wait: Duration = Duration.ZERO,
    lease: Duration? = null,
    block: suspend CoroutineScope.() -> T,
): T? {
    val outcome = lockAndRun(wait, lease) { block() }
    @Suppress("UNCHECKED_CAST")
    return if (outcome === NotAcquired) null else outcome as T
}

/**
 * Runs [block] holding this fenced lock, passing it the hold's fencing token; everything else
 * (owner, re-entry, waiting, cancellation, lease loss, release) is as [withLockSuspending].
 * The token grows with every new holder of the name (a re-entry keeps the holder's token):
 * send it with every write the lock protects, so that the resource refuses a late writer's
 * lower token.
 *
 * ```kotlin
 * relock.getFencedLock("account:42").withTokenSuspending { token -> ledger.post(entry, token) }
 * ```
 *
 * @param T the block's result type
 * @param wait how long to wait for the lock; `null` to wait as long as it takes
 * @param lease how long the hold lasts without renewal; `null` for the watchdog
 * @param block what to run while holding the lock, given the token
 * @return what [block] returned
 * @throws LockNotAcquiredException if `wait` is given and the lock was not acquired within it
 * @throws LockLostException if the hold was lost while the block ran
 * @throws IllegalArgumentException if `lease` is invalid (see [withLockSuspending])
 * @throws RelockException if Redis fails while acquiring (the block does not run) or releasing
 * @throws CancellationException if the calling coroutine is cancelled
 */
public suspend fun <T> FencedLock.withTokenSuspending(
    wait: Duration? = null,
    lease: Duration? = null,
    block: suspend CoroutineScope.(token: Long) -> T,
): T {
    val outcome = lockAndRun(wait, lease, block)
    if (outcome === NotAcquired) {
        throw LockNotAcquiredException(name, checkNotNull(wait) { "an unbounded wait ended without the lock" }.toJavaDuration())
    }
    @Suppress("UNCHECKED_CAST")
    return outcome as T
}

/** What [lockAndRun] returns when the lock was not acquired within the wait. */
private object NotAcquired

/** The lease argument of the lock's async methods that means "the watchdog renews". */
private const val WATCHDOG_LEASE = -1L

/**
 * Acquires for the context's owner (or a new one), runs [block] holding the lock and releases
 * it; [NotAcquired] if the wait ran out.
 */
private suspend fun <T> DistributedLock.lockAndRun(
    wait: Duration?,
    lease: Duration?,
    block: suspend CoroutineScope.(token: Long) -> T,
): Any? {
    val waitMillis = wait?.let(::waitMillis)
    val leaseMillis = leaseMillis(lease)
    currentCoroutineContext().ensureActive() // a cancelled caller sends nothing
    val inherited = currentCoroutineContext()[LockOwner]
    val owner = inherited ?: LockOwner.new()
    val watch = LossWatch.start(this, owner.id)
    val token = try {
        acquire(owner.id, waitMillis, leaseMillis, watch)
    } catch (failure: Throwable) {
        watch.close()
        throw failure
    }
    if (token == null) {
        watch.close()
        return NotAcquired
    }
    return runHolding(owner, addOwner = inherited == null, watch, leaseMillis) { block(token) }
}

/**
 * Acquires for [owner] and suspends until the lock's stage completes: the fencing token when
 * held (0 for a lock without tokens), `null` when a bounded wait ran out. Cancelled while
 * waiting, it cancels the stage (the lock's client then leaves the queue and releases a hold won
 * in the race) and releases a hold the stage had already granted.
 */
private suspend fun DistributedLock.acquire(owner: Long, waitMillis: Long?, leaseMillis: Long, watch: LossWatch): Long? {
    val fenced = this as? FencedLock
    val stage: CompletableFuture<*> = when {
        fenced != null && waitMillis == null ->
            fenced.lockAndGetTokenAsync(leaseMillis, MILLISECONDS, owner).toCompletableFuture()
        fenced != null -> fenced.tryLockAndGetTokenAsync(waitMillis!!, leaseMillis, MILLISECONDS, owner)
            .toCompletableFuture()
        waitMillis == null -> lockAsync(leaseMillis, MILLISECONDS, owner).toCompletableFuture()
        else -> tryLockAsync(waitMillis, leaseMillis, MILLISECONDS, owner).toCompletableFuture()
    }
    // When the reply came, not when this coroutine resumes: a fixed lease is counted from it.
    stage.whenComplete { _, _ -> watch.replied() }
    try {
        return tokenOf(stage.await(), bounded = waitMillis != null)
    } catch (cancelled: CancellationException) {
        stage.cancel(false)
        if (stage.isDone && !stage.isCompletedExceptionally &&
            tokenOf(stage.getNow(null), bounded = waitMillis != null) != null
        ) {
            // Granted before the cancel reached the stage: the stage is this coroutine's to undo.
            try {
                release(owner)
            } catch (releaseFailure: Throwable) {
                cancelled.addSuppressed(releaseFailure)
            }
        }
        throw cancelled
    }
}

/** What an acquire's stage completed with, as a token: `null` for "not acquired". */
private fun tokenOf(result: Any?, bounded: Boolean): Long? = when (result) {
    is Long -> result
    false -> null
    null -> if (bounded) null else 0L
    else -> 0L
}

/** Runs [block] with the hold taken for [owner], then releases it; see [withLockSuspending]. */
private suspend fun <T> DistributedLock.runHolding(
    owner: LockOwner,
    addOwner: Boolean,
    watch: LossWatch,
    leaseMillis: Long,
    block: suspend CoroutineScope.() -> T,
): T {
    val outcome: Result<T> = try {
        val value = coroutineScope {
            // On Default, not the caller's dispatcher, which a block that blocks may be holding.
            val leaseEnd = if (leaseMillis > 0) launch(Dispatchers.Default) { watch.leaseRunsOut(leaseMillis) } else null
            try {
                if (addOwner) {
                    withContext(owner) {
                        watch.attach(coroutineContext.job)
                        block()
                    }
                } else {
                    coroutineScope {
                        watch.attach(coroutineContext.job)
                        block()
                    }
                }
            } finally {
                // After the block's children too: the scopes above wait for them.
                leaseEnd?.cancel()
            }
        }
        Result.success(value)
    } catch (failure: Throwable) {
        Result.failure(failure)
    }
    watch.close()
    val releaseFailure = try {
        release(owner.id)
        null
    } catch (failure: Throwable) {
        failure
    }
    val failure = outcome.exceptionOrNull()
    val lost = watch.lost
    if (lost != null) {
        val thrown = failure as? LockLostException ?: lost
        if (failure != null && failure !== thrown && failure !is CancellationException) {
            thrown.addSuppressed(failure)
        }
        if (releaseFailure != null && releaseFailure !== thrown) {
            thrown.addSuppressed(releaseFailure)
        }
        throw thrown
    }
    if (failure != null) {
        if (releaseFailure != null && releaseFailure !== failure) {
            failure.addSuppressed(releaseFailure)
        }
        throw failure
    }
    if (releaseFailure != null) {
        throw releaseFailure
    }
    return outcome.getOrThrow()
}

/** Releases one hold of [owner], even in a cancelled coroutine. */
private suspend fun DistributedLock.release(owner: Long) {
    withContext(NonCancellable) {
        unlockAsync(owner).await()
    }
}

/** The wait in milliseconds for `tryLockAsync`, rounded up; `null` for an unbounded wait. */
private fun waitMillis(wait: Duration): Long? = when {
    wait.isInfinite() && wait.isPositive() -> null
    !wait.isPositive() -> 0L
    else -> {
        val whole = wait.inWholeMilliseconds
        if (whole < Long.MAX_VALUE && whole.milliseconds < wait) whole + 1 else whole
    }
}

/** The lease in milliseconds for the lock's async methods: [WATCHDOG_LEASE] for `null`. */
private fun leaseMillis(lease: Duration?): Long {
    if (lease == null) {
        return WATCHDOG_LEASE
    }
    require(lease.isFinite() && lease >= 1.milliseconds) {
        "lease must be null (the watchdog renews) or a finite duration of at least 1 ms: $lease"
    }
    return lease.inWholeMilliseconds
}

/**
 * Watches one hold for loss: registered with the lock for the owner before the acquire, it
 * records the first loss (reported by the lock, or a fixed lease's end) as a
 * [LockLostException] and cancels the block's scope with it once the scope is [attached][attach].
 */
private class LossWatch private constructor(private val lockName: String, private val owner: Long) : LockListener {

    private val lostHold = AtomicReference<LockLostException?>()

    @Volatile
    private var scope: Job? = null

    private var registration: ListenerRegistration? = null

    /** The first loss reported, or `null`. */
    val lost: LockLostException?
        get() = lostHold.get()

    @Volatile
    private var repliedAtNanos = System.nanoTime()

    override fun onLockLost(event: LockLostEvent) {
        report(LockLostException(lockName, owner, event.cause()))
    }

    /** The acquire's reply arrived: a fixed lease runs from now. */
    fun replied() {
        repliedAtNanos = System.nanoTime()
    }

    /** Suspends until the fixed lease, counted from the acquire's reply, is over; then reports the loss. */
    suspend fun leaseRunsOut(leaseMillis: Long) {
        delay(leaseMillis - NANOSECONDS.toMillis(System.nanoTime() - repliedAtNanos))
        report(LockLostException(lockName, owner, TimeoutException("its fixed lease of $leaseMillis ms ran out")))
    }

    private fun report(exception: LockLostException) {
        if (lostHold.compareAndSet(null, exception)) {
            scope?.let { cancel(it, exception) }
        }
    }

    /** The block's scope, cancelled by a loss reported before or after this call. */
    fun attach(job: Job) {
        scope = job
        lostHold.get()?.let { cancel(job, it) }
    }

    /** Stops watching. */
    fun close() {
        registration?.close()
    }

    private fun cancel(job: Job, lost: LockLostException) {
        job.cancel(CancellationException(lost.message, lost))
    }

    companion object {

        /** Starts watching [owner]'s holds of [lock]; a lock that cannot report losses is not watched. */
        fun start(lock: DistributedLock, owner: Long): LossWatch {
            val watch = LossWatch(lock.name, owner)
            watch.registration = try {
                lock.addLostListener(owner, watch)
            } catch (unsupported: UnsupportedOperationException) {
                null
            }
            return watch
        }
    }
}
