package io.relock.kotlin

import io.relock.RelockException
import kotlin.time.Duration

/**
 * Thrown by [withLockSuspending] given a `wait` when the lock was not acquired within it: another owner
 * held it all along. Nothing is held then and the block did not run. Redis failures are not
 * reported this way but as the [RelockException] they are.
 *
 * @property lockName the name of the lock that was not acquired
 * @property wait how long [withLockSuspending] waited
 */
public class LockNotAcquiredException(
    public val lockName: String,
    public val wait: Duration,
) : RelockException("lock '$lockName' was not acquired within $wait: another owner held it") {

    private companion object {
        private const val serialVersionUID: Long = 1L
    }
}
