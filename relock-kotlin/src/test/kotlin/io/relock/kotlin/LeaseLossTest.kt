package io.relock.kotlin

import io.relock.DistributedLock
import io.relock.LockLostException
import io.relock.Relock
import io.relock.RelockConfig
import io.relock.testkit.Eventually
import io.relock.testkit.RedisExtension
import io.relock.testkit.RedisServer
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeoutException
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.consumeEach
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * A lost hold stops the block in every form of the coroutine face: the block (here a consumer
 * of a channel the test feeds, with a child coroutine of its own) is cancelled, its channel is
 * cancelled with it so that the test's next send is refused, its child is cancelled too, and the
 * call throws [LockLostException]. Watchdog-renewed forms lose their hold to a force-unlock from
 * another client; fixed-lease forms to the end of their lease. relock-kotlin has no `Flow` form:
 * a `Flow` collected inside the block is stopped the same way, by the block's cancellation.
 */
internal class LeaseLossTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis: RedisExtension = RedisExtension.perClass()

        val PROMPTLY: Duration = 10.seconds

        /** Short enough for a test, long enough that the block is running when it ends. */
        val SHORT_LEASE: Duration = 1.seconds
    }

    private lateinit var server: RedisServer
    private val clients = mutableListOf<Relock>()

    /** The holder: renewals every 500 ms, so that a force-unlock is noticed soon. */
    private lateinit var holder: Relock

    /** Another client, which force-unlocks. */
    private lateinit var other: Relock

    @BeforeEach
    fun start(server: RedisServer) {
        this.server = server
        holder = client(1500.milliseconds)
        other = client(30.seconds)
    }

    @AfterEach
    fun close() {
        clients.forEach(Relock::close)
        clients.clear()
    }

    private fun client(watchdog: Duration): Relock = Relock.create(
        RelockConfig.builder()
            .singleServer(server.uri())
            .watchdogTimeout(watchdog.toJavaDuration())
            .commandTimeout(java.time.Duration.ofSeconds(1))
            .build(),
    ).also(clients::add)

    @Test
    fun withLockSuspendingForceUnlocked() = assertLossStopsTheBlock("withLock", forceUnlock = true) { block ->
        withLockSuspending { block() }
    }

    @Test
    fun withLockSuspendingWithAWaitForceUnlocked() = assertLossStopsTheBlock("withLock-wait", forceUnlock = true) { block ->
        withLockSuspending(wait = 1.seconds) { block() }
    }

    @Test
    fun withLockSuspendingWhoseLeaseRunsOut() = assertLossStopsTheBlock("withLock-lease", forceUnlock = false) { block ->
        withLockSuspending(lease = SHORT_LEASE) { block() }
    }

    @Test
    fun tryWithLockSuspendingForceUnlocked() = assertLossStopsTheBlock("tryWithLock", forceUnlock = true) { block ->
        tryWithLockSuspending { block() }
    }

    @Test
    fun tryWithLockSuspendingWhoseLeaseRunsOut() = assertLossStopsTheBlock("tryWithLock-lease", forceUnlock = false) { block ->
        tryWithLockSuspending(wait = 1.seconds, lease = SHORT_LEASE) { block() }
    }

    @Test
    fun withTokenSuspendingForceUnlocked() = assertLossStopsTheBlock("withToken", forceUnlock = true, fenced = true) { block ->
        (this as io.relock.FencedLock).withTokenSuspending { block() }
    }

    @Test
    fun withTokenSuspendingWhoseLeaseRunsOut() =
        assertLossStopsTheBlock("withToken-lease", forceUnlock = false, fenced = true) { block ->
            (this as io.relock.FencedLock).withTokenSuspending(lease = SHORT_LEASE) { block() }
        }

    @Test
    fun aNestedReentryIsStoppedWithItsOuterBlock() = assertLossStopsTheBlock("nested", forceUnlock = true) { block ->
        withLockSuspending { withLockSuspending { block() } }
    }

    /**
     * Runs [call] on a lock named [name] of the holder with a block that consumes a channel and
     * has a child coroutine, loses the hold, and checks that everything stopped and the call
     * threw [LockLostException].
     */
    private fun assertLossStopsTheBlock(
        name: String,
        forceUnlock: Boolean,
        fenced: Boolean = false,
        call: suspend DistributedLock.(block: suspend CoroutineScope.() -> Unit) -> Any?,
    ): Unit = runBlocking {
        val lock = if (fenced) holder.getFencedLock(name) else holder.getLock(name)
        val items = Channel<Int>(Channel.UNLIMITED)
        val processed = CopyOnWriteArrayList<Int>()
        val firstProcessed = CompletableDeferred<Unit>()
        val childStarted = CompletableDeferred<Unit>()
        val blockCancelledWith = CompletableDeferred<Throwable>()
        val childCancelledWith = CompletableDeferred<Throwable>()

        val running = async(Dispatchers.Default) {
            runCatching {
                lock.call {
                    launch {
                        try {
                            childStarted.complete(Unit)
                            CompletableDeferred<Unit>().await()
                        } catch (cancelled: CancellationException) {
                            childCancelledWith.complete(cancelled)
                            throw cancelled
                        }
                    }
                    try {
                        items.consumeEach {
                            processed += it
                            firstProcessed.complete(Unit)
                        }
                    } catch (cancelled: CancellationException) {
                        blockCancelledWith.complete(cancelled)
                        throw cancelled
                    }
                }
            }
        }
        withTimeout(PROMPTLY) {
            childStarted.await()
            assertThat(items.trySend(1).isSuccess).isTrue()
            firstProcessed.await()
        }
        if (forceUnlock) {
            assertThat(other.getLock(name).forceUnlock()).`as`("force-unlocked by the other client").isTrue()
        }

        val failure = withTimeout(PROMPTLY) { running.await() }.exceptionOrNull()
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining(name)
        assertThat((failure as LockLostException).lockName()).isEqualTo(name)
        if (!forceUnlock) {
            assertThat(failure).hasCauseInstanceOf(TimeoutException::class.java)
                .hasMessageContaining("lease of ${SHORT_LEASE.inWholeMilliseconds} ms ran out")
        }
        val blockCause = withTimeout(PROMPTLY) { blockCancelledWith.await() }
        assertThat(generateSequence(blockCause) { it.cause }.toList()).`as`("the block's cancellation and its causes")
            .anyMatch { it is LockLostException }
        assertThat(withTimeout(PROMPTLY) { childCancelledWith.await() }).`as`("the child's cancellation")
            .isInstanceOf(CancellationException::class.java)
        assertThat(items.trySend(2).isSuccess).`as`("the block's channel refuses work after the loss").isFalse()
        assertThat(processed).`as`("items processed").containsExactly(1)
        Eventually.await(PROMPTLY.toJavaDuration(), "'$name' free") { !other.getLockInfo(name).isLocked() }
    }
}
