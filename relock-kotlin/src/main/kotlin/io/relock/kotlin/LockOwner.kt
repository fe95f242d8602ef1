package io.relock.kotlin

import io.relock.Relock
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * The owner of the holds taken by [withLockSuspending] and [tryWithLockSuspending]: a
 * coroutine-context element, so ownership follows the work, not a thread.
 *
 * `withLockSuspending` uses the `LockOwner` of the calling coroutine's context if there is one,
 * and otherwise creates one (with an id from [Relock.newOwnerId]) and runs its block with it
 * added to the context. Everything that inherits that context is the same owner:
 * - code after a suspension point, whichever thread resumes it;
 * - `withContext(Dispatchers.IO) { ... }` and any other context switch inside the block: a
 *   nested `withLockSuspending` on the same lock there re-enters (hold count 2) instead of
 *   waiting for itself;
 * - **child coroutines** (`launch`, `async`) started inside the block. They share the hold:
 *   structured concurrency makes `withLockSuspending` wait for them before it releases, so they
 *   never run unprotected, and binding ownership to a `Job` instead would break re-entry across
 *   `withContext`, which starts a new `Job`. The lock does not exclude two children of one
 *   block from each other.
 *
 * A coroutine that must be an owner of its own (to contend for the lock with its parent or its
 * siblings) is started with a new one: `launch(LockOwner.new()) { lock.withLockSuspending { } }`.
 * Started inside the parent's block, such a coroutine waits until the parent releases, and the
 * parent's block waits for its children: give it a `wait`, or use [tryWithLockSuspending].
 *
 * Owners are compared by [id]. An owner's holds belong to one [Relock] client: the same id used
 * with another client's lock is another owner on Redis. Any id is accepted (to share an owner
 * with code that uses the lock's async methods), but a positive one is a thread's id, and that
 * thread of the client then counts as the same owner.
 *
 * @property id the owner id passed to the lock's async methods (`lockAsync`, `unlockAsync`,
 *     `isHeldByThread`); a negative id from [Relock.newOwnerId] for owners made by [new]
 */
public class LockOwner(public val id: Long) : AbstractCoroutineContextElement(LockOwner) {

    /** The key of [LockOwner] in a [CoroutineContext]: `coroutineContext[LockOwner]`. */
    public companion object Key : CoroutineContext.Key<LockOwner> {

        /**
         * A new owner with a JVM-unique id from [Relock.newOwnerId], never a thread's id: add it
         * to a coroutine's context to make that coroutine (and its children) an owner of its own.
         *
         * @return the new owner
         */
        public fun new(): LockOwner = LockOwner(Relock.newOwnerId())
    }

    /** Owners are equal when their [id]s are. */
    override fun equals(other: Any?): Boolean = other is LockOwner && other.id == id

    /** The [id]'s hash. */
    override fun hashCode(): Int = id.hashCode()

    /** `LockOwner(id)`. */
    override fun toString(): String = "LockOwner($id)"
}
