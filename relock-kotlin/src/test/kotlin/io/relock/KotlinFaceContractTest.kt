package io.relock

import java.util.concurrent.TimeUnit
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test

/**
 * [LockContractTest] through the coroutine face: every acquire and release of the lock under
 * test is a `withLockSuspending`/`tryWithLockSuspending` of relock-kotlin (see [CoroutineFaceLock]), on the
 * reentrant lock; its rivals are plain locks of other clients or the same face.
 */
internal class KotlinFaceContractTest : LockContractTest() {

    override fun newLock(client: Relock, name: String): DistributedLock = CoroutineFaceLock(client, client.getLock(name))

    /**
     * The face takes a `kotlin.time.Duration` named `lease`, so its rejections name that, not the
     * Java `leaseTime`: the same bad leases are rejected before anything reaches Redis.
     */
    @Test
    override fun badLeasesAndUnitsAreRejectedBeforeTouchingRedis() {
        val lock = newLock("bad-input")
        assertThatThrownBy { lock.lock(0, TimeUnit.SECONDS) }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("lease")
        assertThatThrownBy { lock.lock(-2, TimeUnit.SECONDS) }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("lease")
        assertThatThrownBy { lock.tryLock(1, 0, TimeUnit.SECONDS) }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("lease")
        assertThatThrownBy { lock.lock(Long.MAX_VALUE, TimeUnit.DAYS) }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("finite")
        assertThatThrownBy { lock.lockInterruptibly(500, TimeUnit.MICROSECONDS) }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("at least 1 ms")
        assertThat(backend.dbSize()).isEqualTo(0L)
    }
}
