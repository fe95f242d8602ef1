package io.relock.kotlin

import io.relock.Relock
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.Executors
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * What the coroutine face must do on any back end with two clients: a block on one client begins
 * only after the other client's block on the same lock has ended, and coroutines on both clients
 * never overlap nor lose an update. A subclass brings the back end: its two clients, and how to
 * tell that the second client's acquire is under way.
 */
internal abstract class TwoClientFaceContract {

    protected abstract val first: Relock
    protected abstract val second: Relock

    /** Returns once the second client's acquire of [name] is under way (queued, or answered busy). */
    protected abstract suspend fun awaitSecondWaiting(name: String)

    private val promptly: Duration = 10.seconds

    @Test
    fun aBlockOnOneClientKeepsTheOtherClientsBlockWaitingTillItEnds(): Unit = runBlocking {
        val name = "exclusive"
        val history = ConcurrentLinkedQueue<String>()
        val entered = CompletableDeferred<Unit>()
        val finish = CompletableDeferred<Unit>()
        val holding = launch(Dispatchers.Default) {
            first.getLock(name).withLockSuspending {
                history += "first begins"
                entered.complete(Unit)
                finish.await()
                history += "first ends"
            }
        }
        withTimeout(promptly) { entered.await() }
        val waiting = async(Dispatchers.Default) {
            second.getLock(name).withLockSuspending {
                history += "second begins"
                "second"
            }
        }
        // The second's attempt is under way while the first holds: a grant would be a second holder.
        awaitSecondWaiting(name)
        assertThat(waiting.isCompleted).`as`("the second client's call while the first holds").isFalse()

        finish.complete(Unit)

        assertThat(withTimeout(promptly) { waiting.await() }).isEqualTo("second")
        holding.join()
        assertThat(history).containsExactly("first begins", "first ends", "second begins")
        assertThat(withContext(Dispatchers.IO) { first.getLockInfo(name).isLocked() })
            .`as`("locked after both ended").isFalse()
    }

    @Test
    fun coroutinesOnOneThreadAndTwoClientsNeverOverlapNorLoseAnUpdate() {
        val coroutines = 100
        val locks = 5
        val counters = IntArray(locks)
        val inside = BooleanArray(locks)
        var overlaps = 0
        Executors.newSingleThreadExecutor().asCoroutineDispatcher().use { oneThread ->
            runBlocking(oneThread) {
                withTimeout(60.seconds) {
                    repeat(coroutines) { i ->
                        launch {
                            val n = i % locks
                            listOf(first, second)[i % 2].getLock("counter-$n").withLockSuspending {
                                if (inside[n]) {
                                    overlaps++
                                }
                                inside[n] = true
                                val seen = counters[n]
                                yield() // the other coroutines run here: an overlap would lose an update
                                counters[n] = seen + 1
                                inside[n] = false
                            }
                        }
                    }
                }
            }
        }
        assertThat(overlaps).`as`("overlapping critical sections").isZero()
        assertThat(counters).`as`("updates per lock").containsOnly(coroutines / locks)
    }
}
