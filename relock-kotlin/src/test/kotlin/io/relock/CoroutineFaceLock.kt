package io.relock

import io.relock.kotlin.LockOwner
import io.relock.kotlin.tryWithLockSuspending
import io.relock.kotlin.withLockSuspending
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import kotlin.time.Duration
import kotlin.time.toDuration
import kotlin.time.toDurationUnit
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.future.future
import kotlinx.coroutines.selects.select

/**
 * A [DistributedLock] whose acquires and releases go through the coroutine face, so that
 * [LockContractTest] runs on it: each hold is a coroutine suspended inside `withLockSuspending` (or
 * `tryWithLockSuspending`) until the matching `unlock` lets it return. Each calling thread is one
 * [LockOwner] of this lock object, its holds a stack; a re-entrant acquire is one
 * more coroutine with the thread's owner in its context, which `withLockSuspending` re-enters. Interrupts
 * while waiting cancel the waiting coroutine. Hold counts are read from Redis for the owner.
 * Inspection (`isLocked`, `remainTimeToLive`, `forceUnlock`) and the async forms go to the
 * lock itself.
 */
internal class CoroutineFaceLock(
    private val client: Relock,
    private val lock: DistributedLock,
) : DistributedLock by lock {

    /** A hold: the coroutine suspended in the face's block until [release] completes. */
    private class Hold(val coroutine: Deferred<*>, val release: CompletableDeferred<Unit>)

    /** The holds of each thread, newest last. */
    private val holds = ConcurrentHashMap<Long, ArrayDeque<Hold>>()

    /**
     * The owner of each thread that used this lock object. Per object, not global: the contract
     * test also passes async owner ids (101, 102) that may be ids of threads of earlier tests.
     */
    private val owners = ConcurrentHashMap<Long, LockOwner>()

    override fun lock() {
        acquire(wait = null, lease = null, interruptible = false)
    }

    override fun lock(leaseTime: Long, unit: TimeUnit) {
        acquire(wait = null, lease = lease(leaseTime, unit), interruptible = false)
    }

    override fun lockInterruptibly() {
        acquire(wait = null, lease = null, interruptible = true)
    }

    override fun lockInterruptibly(leaseTime: Long, unit: TimeUnit) {
        acquire(wait = null, lease = lease(leaseTime, unit), interruptible = true)
    }

    override fun tryLock(): Boolean = acquire(wait = Duration.ZERO, lease = null, interruptible = false)

    override fun tryLock(waitTime: Long, unit: TimeUnit): Boolean =
        acquire(wait = waitTime.toDuration(unit.toDurationUnit()), lease = null, interruptible = true)

    override fun tryLock(waitTime: Long, leaseTime: Long, unit: TimeUnit): Boolean =
        acquire(wait = waitTime.toDuration(unit.toDurationUnit()), lease = lease(leaseTime, unit), interruptible = true)

    override fun unlock() {
        val hold = holds[currentThreadId()]?.removeLastOrNull()
        if (hold == null) {
            await(lock.unlockAsync(owner().id).toCompletableFuture()) // not held through the face: the lock says why
            return
        }
        hold.release.complete(Unit)
        try {
            await(hold.coroutine.asCompletableFuture())
        } catch (lost: LockLostException) {
            // The face stops a block whose fixed lease ran out; its release then found the hold
            // gone, which is what unlock() reports.
            throw lost.suppressed.filterIsInstance<IllegalMonitorStateException>().firstOrNull() ?: lost
        }
    }

    override fun isHeldByCurrentThread(): Boolean = lock.isHeldByThread(owner().id)

    override fun isHeldByThread(threadId: Long): Boolean = lock.isHeldByThread(owners[threadId]?.id ?: threadId)

    override fun getHoldCount(): Int =
        (client.getLockInfo(lock.name).holders()["${client.clientId()}:${owner().id}"] ?: 0L).toInt()

    /** Takes one hold for the calling thread's owner through the face; `false` if the wait ran out. */
    private fun acquire(wait: Duration?, lease: Duration?, interruptible: Boolean): Boolean {
        if (interruptible && Thread.interrupted()) {
            throw InterruptedException("interrupted before waiting for '${lock.name}'")
        }
        val owner = owner()
        val acquired = CompletableDeferred<Unit>()
        val release = CompletableDeferred<Unit>()
        val coroutine = SCOPE.async(owner) {
            val body: suspend CoroutineScope.() -> Unit = {
                acquired.complete(Unit)
                release.await()
            }
            if (wait == null) {
                lock.withLockSuspending(lease = lease, block = body)
            } else {
                lock.tryWithLockSuspending(wait, lease, body)
            }
        }
        val outcome = SCOPE.future {
            select {
                acquired.onAwait { true }
                coroutine.onAwait { false } // returned before acquiring: tryWithLockSuspending's null
            }
        }
        val held = try {
            if (interruptible) outcome.get() else await(outcome)
        } catch (interrupt: InterruptedException) {
            await(SCOPE.future { coroutine.cancelAndJoin() }) // leaves the wait; releases a hold won meanwhile
            throw interrupt
        } catch (failure: ExecutionException) {
            throw failure.cause ?: failure
        }
        if (held) {
            holds.computeIfAbsent(currentThreadId()) { ArrayDeque() }.addLast(Hold(coroutine, release))
        }
        return held
    }

    private fun owner(): LockOwner = owners.computeIfAbsent(currentThreadId()) { LockOwner.new() }

    private companion object {

        /** Runs the holds' coroutines. */
        val SCOPE = CoroutineScope(SupervisorJob() + Dispatchers.Default)

        /** The thread's id, as the core's owners use it (`Thread.getId()` on Java 17). */
        fun currentThreadId(): Long = Thread.currentThread().id

        /** The face's lease for a Java lease argument: `null` (watchdog) for -1. */
        fun lease(leaseTime: Long, unit: TimeUnit): Duration? =
            if (leaseTime == -1L) null else leaseTime.toDuration(unit.toDurationUnit())

        /** Waits without being interruptible and throws what the future failed with. */
        fun <T> await(future: CompletableFuture<T>): T = try {
            future.join()
        } catch (failure: CompletionException) {
            throw failure.cause ?: failure
        }
    }
}
