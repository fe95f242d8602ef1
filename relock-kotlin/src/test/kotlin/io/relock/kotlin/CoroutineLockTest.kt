package io.relock.kotlin

import io.relock.LockLostException
import io.relock.LockNotAcquiredException
import io.relock.Relock
import io.relock.RelockConfig
import io.relock.testkit.Eventually
import io.relock.testkit.RedisExtension
import io.relock.testkit.RedisServer
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit.MILLISECONDS
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.future.await
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/** The coroutine face on a real Redis: owners, re-entry, children, cancellation, lease loss. */
internal class CoroutineLockTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis: RedisExtension = RedisExtension.perClass()

        /** Generous bound for anything that should happen "promptly"; never a performance claim. */
        val PROMPTLY: Duration = 10.seconds

        /** Holders' watchdog: long, so that no lease runs out under a test not about leases. */
        val STEADY_WATCHDOG: Duration = 30.seconds
    }

    private lateinit var server: RedisServer
    private val clients = mutableListOf<Relock>()

    @BeforeEach
    fun useServer(server: RedisServer) {
        this.server = server
    }

    @AfterEach
    fun closeClients() {
        clients.forEach(Relock::close)
        clients.clear()
    }

    private fun client(watchdog: Duration = STEADY_WATCHDOG): Relock = Relock.create(
        RelockConfig.builder()
            .singleServer(server.uri())
            .watchdogTimeout(watchdog.toJavaDuration())
            .commandTimeout(java.time.Duration.ofSeconds(1))
            .build(),
    ).also(clients::add)

    /** How often [owner] holds [name] according to Redis. */
    private fun Relock.holdCount(name: String, owner: LockOwner): Long =
        getLockInfo(name).holders()["${clientId()}:${owner.id}"] ?: 0L

    /** Returns once some client is subscribed waiting for [name]. */
    private fun Relock.awaitWaiter(name: String) =
        Eventually.await(PROMPTLY.toJavaDuration(), "a waiter on '$name'") { getLockInfo(name).waitingClients() > 0 }

    /** Returns once no client waits for [name] any more. */
    private fun Relock.awaitNoWaiter(name: String) =
        Eventually.await(PROMPTLY.toJavaDuration(), "no waiter left on '$name'") {
            getLockInfo(name).waitingClients() == 0L
        }

    @Test
    fun aThousandCoroutinesOnOneThreadContendForTenLocksWithoutLosingAnUpdate() {
        val relocks = listOf(client(), client())
        val counters = IntArray(10)
        val inside = BooleanArray(10)
        var overlaps = 0
        Executors.newSingleThreadExecutor().asCoroutineDispatcher().use { oneThread ->
            runBlocking(oneThread) {
                withTimeout(60.seconds) {
                    repeat(1000) { i ->
                        launch {
                            val n = i % 10
                            relocks[i % 2].getLock("counter-$n").withLockSuspending {
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
        assertThat(counters).`as`("updates per lock").containsOnly(100)
    }

    @Test
    fun reentryFollowsTheCoroutineAcrossSuspensionAndDispatcherSwitches(): Unit = runBlocking {
        val relock = client()
        val lock = relock.getLock("reentrant")
        lock.withLockSuspending {
            val owner = checkNotNull(coroutineContext[LockOwner])
            yield()
            withContext(Dispatchers.IO) {
                lock.withLockSuspending {
                    assertThat(relock.holdCount("reentrant", owner)).isEqualTo(2)
                    assertThat(lock.isHeldByThread(owner.id)).isTrue()
                }
            }
            assertThat(relock.holdCount("reentrant", owner)).isEqualTo(1)
        }
        assertThat(lock.isLocked).isFalse()
    }

    @Test
    fun aFencedLockGivesTheBlockATokenThatGrowsWithEveryNewHolder(): Unit = runBlocking {
        val first = client().getFencedLock("fenced")
        val second = client().getFencedLock("fenced")
        val token = first.withTokenSuspending { token ->
            first.withTokenSuspending { again -> assertThat(again).`as`("re-entry keeps the token").isEqualTo(token) }
            token
        }
        val next = second.withTokenSuspending(wait = 5.seconds) { it }

        assertThat(next).isGreaterThan(token)
        assertThat(first.isLocked).isFalse()
    }

    @Test
    fun childrenShareTheHoldAndACoroutineWithItsOwnOwnerIsExcluded(): Unit = runBlocking {
        val relock = client()
        val lock = relock.getLock("family")
        lock.withLockSuspending {
            val owner = checkNotNull(coroutineContext[LockOwner])
            val child = async(Dispatchers.Default) { lock.withLockSuspending { relock.holdCount("family", owner) } }
            assertThat(child.await()).`as`("the child re-entered the parent's hold").isEqualTo(2)

            val stranger = async(LockOwner.new()) { lock.tryWithLockSuspending { "entered" } }
            assertThat(stranger.await()).isNull()
            val waiter = async(LockOwner.new()) {
                runCatching { lock.withLockSuspending(wait = 200.milliseconds) { "entered" } }.exceptionOrNull()
            }
            assertThat(waiter.await()).isInstanceOf(LockNotAcquiredException::class.java)
                .hasMessageContaining("family").hasMessageContaining("200 ms")
            assertThat(relock.holdCount("family", owner)).isEqualTo(1)
        }
        assertThat(lock.isLocked).isFalse()
    }

    @Test
    fun anotherClientWaitsTillTheBlockEndsAndAGivenUpWaitRunsNothing(): Unit = runBlocking {
        val lock = client().getLock("busy")
        val rival = client().getLock("busy")
        val entered = CompletableDeferred<Unit>()
        val release = CompletableDeferred<Unit>()
        val holder = launch(Dispatchers.Default) {
            lock.withLockSuspending {
                entered.complete(Unit)
                release.await()
            }
        }
        entered.await()
        var ran = false
        assertThat(rival.tryWithLockSuspending(wait = 100.milliseconds) { ran = true }).isNull()
        assertThat(runCatching { rival.withLockSuspending(wait = Duration.ZERO) { ran = true } }.exceptionOrNull())
            .isInstanceOf(LockNotAcquiredException::class.java).hasMessageContaining("busy")
        assertThat(ran).isFalse()
        val waiting = async(Dispatchers.Default) { rival.withLockSuspending { "after the holder" } }
        release.complete(Unit)
        holder.join()
        assertThat(withTimeout(PROMPTLY) { waiting.await() }).isEqualTo("after the holder")
    }

    @Test
    fun cancellingAWaiterLeavesTheQueueAndTheNextOwnerGetsTheLockPromptly(): Unit = runBlocking {
        val holderClient = client()
        val waiterClient = client()
        val holder = holderClient.getLock("queue")
        val holderOwner = Relock.newOwnerId()
        holder.lockAsync(holderOwner).await()

        val waiterOwner = LockOwner.new()
        val waiterLock = waiterClient.getLock("queue")
        var entered = false
        val waiter = launch(Dispatchers.Default + waiterOwner) { waiterLock.withLockSuspending { entered = true } }
        holderClient.awaitWaiter("queue")
        waiter.cancelAndJoin()

        assertThat(waiter.isCancelled).isTrue()
        assertThat(entered).isFalse()
        holderClient.awaitNoWaiter("queue")
        assertThat(waiterLock.isHeldByThread(waiterOwner.id)).isFalse()
        // The holder's lease is 30 s: a third owner that gets the lock well before proves that the
        // release went to it, not to a cancelled waiter left in the queue.
        val thirdLock = client().getLock("queue")
        val third = async(Dispatchers.Default) { thirdLock.withLockSuspending(wait = PROMPTLY) { "third" } }
        holderClient.awaitWaiter("queue")
        holder.unlockAsync(holderOwner).await()
        assertThat(third.await()).isEqualTo("third")
        assertThat(waiterLock.isHeldByThread(waiterOwner.id)).isFalse()
    }

    @Test
    fun cancellingTheBlockReleasesTheLock(): Unit = runBlocking {
        val lock = client().getLock("cancelled")
        val entered = CompletableDeferred<LockOwner>()
        val work = launch(Dispatchers.Default) {
            lock.withLockSuspending {
                entered.complete(checkNotNull(coroutineContext[LockOwner]))
                awaitCancellation()
            }
        }
        val owner = entered.await()
        assertThat(lock.isHeldByThread(owner.id)).isTrue()
        work.cancelAndJoin()
        assertThat(lock.isLocked).isFalse()
    }

    @Test
    fun aGrantRacingWithTheCancelNeverLeavesTheLockStuck(): Unit = runBlocking {
        val holderClient = client()
        val waiterClient = client()
        val thirdClient = client()
        repeat(20) { round ->
            val name = "race-$round"
            val holder = holderClient.getLock(name)
            val holderOwner = Relock.newOwnerId()
            holder.lockAsync(holderOwner).await()
            val waiterOwner = LockOwner.new()
            val waiterLock = waiterClient.getLock(name)
            val waiter = launch(Dispatchers.Default + waiterOwner) {
                waiterLock.withLockSuspending { awaitCancellation() }
            }
            holderClient.awaitWaiter(name)

            val released = holder.unlockAsync(holderOwner) // hands the lock to the waiter ...
            waiter.cancel() // ... while it is being cancelled
            released.await()
            waiter.join()

            val third = thirdClient.getLock(name).withLockSuspending(wait = PROMPTLY) { "third" }
            assertThat(third).`as`("round %d", round).isEqualTo("third")
            assertThat(waiterLock.isHeldByThread(waiterOwner.id)).`as`("round %d", round).isFalse()
        }
    }

    @Test
    fun aLostHoldCancelsTheBlockAndTheCallThrowsLockLostException(): Unit = runBlocking {
        val lock = client(watchdog = 1500.milliseconds).getLock("lost")
        val entered = CompletableDeferred<Unit>()
        val cancelledWith = CompletableDeferred<Throwable>()
        val work = async(Dispatchers.Default) {
            runCatching {
                lock.withLockSuspending {
                    entered.complete(Unit)
                    try {
                        awaitCancellation()
                    } catch (cancelled: CancellationException) {
                        cancelledWith.complete(cancelled)
                        throw cancelled
                    }
                }
            }
        }
        entered.await()
        assertThat(client().getLock("lost").forceUnlock()).isTrue()

        val failure = withTimeout(PROMPTLY) { work.await() }.exceptionOrNull()
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("lost")
        assertThat((failure as LockLostException).lockName()).isEqualTo("lost")
        val causes = generateSequence(cancelledWith.await()) { it.cause }.toList()
        assertThat(causes).`as`("the block's cancellation and its causes").anyMatch { it === failure }
    }

    @Test
    fun aHoldGoneByTheReleaseIsReportedAndSuppressedOntoTheBlocksFailure(): Unit = runBlocking {
        val lock = client().getLock("short")
        val other = client()
        // A fixed lease is not renewed, so nothing notices a force-unlock before its end (30 s):
        // only the release finds the hold gone.
        fun forceUnlocked() = assertThat(other.getLock("short").forceUnlock()).isTrue()

        val returned = runCatching { lock.withLockSuspending(lease = 30.seconds) { forceUnlocked() } }
        assertThat(returned.exceptionOrNull()).isInstanceOf(IllegalMonitorStateException::class.java)
            .hasMessageContaining("short")

        val failed = runCatching {
            lock.withLockSuspending(lease = 30.seconds) {
                forceUnlocked()
                throw IllegalStateException("the block failed")
            }
        }.exceptionOrNull()
        assertThat(failed).isInstanceOf(IllegalStateException::class.java).hasMessage("the block failed")
        assertThat(failed!!.suppressed).singleElement().isInstanceOf(IllegalMonitorStateException::class.java)
    }

    @Test
    fun aBlockingCallOnRelocksOwnIoThreadFailsAtOnceNamingWithContext(): Unit = runBlocking {
        val lock = client().getLock("unconfined")
        // Paused, so that the acquire's reply surely completes on the client's I/O thread, where
        // the Unconfined block then resumes.
        server.pause()
        val work = try {
            async(Dispatchers.Unconfined) {
                runCatching { lock.withLockSuspending { lock.isHeldByThread(1) } }
            }
        } finally {
            server.resume()
        }
        val failure = withTimeout(PROMPTLY) { work.await() }.exceptionOrNull()
        assertThat(failure).isInstanceOf(IllegalStateException::class.java)
            .hasMessageContaining("lock 'unconfined'").hasMessageContaining("withContext(Dispatchers.IO)")
        assertThat(lock.isLocked).`as`("released after the failure").isFalse()
        val moved = lock.withLockSuspending {
            val owner = checkNotNull(coroutineContext[LockOwner]).id
            withContext(Dispatchers.IO) { lock.isHeldByThread(owner) }
        }
        assertThat(moved).`as`("the same call moved off with withContext(Dispatchers.IO)").isTrue()
    }

    @Test
    fun badLeasesAreRejectedBeforeAnythingIsSent(): Unit = runBlocking {
        val lock = client().getLock("bad-lease")
        for (lease in listOf(Duration.ZERO, (-1).seconds, 500.milliseconds / 1000, Duration.INFINITE)) {
            assertThat(runCatching { lock.withLockSuspending(lease = lease) { "ran" } }.exceptionOrNull())
                .`as`("lease %s", lease)
                .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("lease")
        }
        assertThat(server.command("EXISTS", "bad-lease")).isEqualTo(0L)
    }
}
