package io.relock.kotlin

import io.relock.DistributedLock
import io.relock.FencedLock
import io.relock.LockLostException
import io.relock.Relock
import io.relock.RelockConfig
import io.relock.RelockConnectionException
import io.relock.testkit.Eventually
import io.relock.zookeeper.RelockZooKeeper
import java.util.UUID
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import kotlin.time.Duration
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
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.apache.curator.framework.CuratorFramework
import org.apache.curator.framework.CuratorFrameworkFactory
import org.apache.curator.retry.RetryOneTime
import org.apache.curator.test.TestingServer
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test

/**
 * The coroutine face on a real ZooKeeper, with two clients. The histories checked: no two
 * holders ([TwoClientFaceContract]); a hold whose
 * session expires stops its block (cancelled with its child and its channel, nothing processed
 * after the loss, the call throwing [LockLostException] caused by the lost session), and the
 * other client then gets the lock.
 */
internal class ZooKeeperFaceTest : TwoClientFaceContract() {

    companion object {
        val PROMPTLY: Duration = 10.seconds

        /** The smallest session ZooKeeper grants with its default tick of 2 s: an expired one's nodes go soon. */
        val SESSION: Duration = 4.seconds

        /**
         * Until the other client gets in after an injected expiry: the holder's client deletes
         * the given-up node once it has a new session, and the server would drop it with the old
         * session within its timeout (plus a tick) anyway; with a margin for a loaded machine.
         */
        val SESSION_GONE: Duration = PROMPTLY + SESSION + SESSION

        private lateinit var zookeeper: TestingServer

        @JvmStatic
        @BeforeAll
        fun startZooKeeper() {
            zookeeper = TestingServer(true)
        }

        @JvmStatic
        @AfterAll
        fun stopZooKeeper() {
            zookeeper.close()
        }

        private fun config(): RelockConfig = RelockConfig.builder()
            .singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
            .watchdogTimeout(java.time.Duration.ofSeconds(30))
            .commandTimeout(java.time.Duration.ofSeconds(2))
            .build()
    }

    /** Each test's locks under a root of their own. */
    private val root = "/kotlin-face/${UUID.randomUUID()}"
    private val open = mutableListOf<AutoCloseable>()
    override lateinit var first: Relock
    override lateinit var second: Relock

    @BeforeEach
    fun startClients() {
        first = client()
        second = client()
    }

    @AfterEach
    fun closeAll() {
        open.asReversed().forEach(AutoCloseable::close)
        open.clear()
    }

    private fun client(): Relock = RelockZooKeeper.builder(zookeeper.connectString).root(root)
        .sessionTimeout(SESSION.toJavaDuration()).config(config()).build().also(open::add)

    /** A Curator client of the test's own, so that its session can be expired. */
    private fun curator(): CuratorFramework {
        val curator = CuratorFrameworkFactory.builder().connectString(zookeeper.connectString)
            .sessionTimeoutMs(SESSION.inWholeMilliseconds.toInt()).connectionTimeoutMs(2000)
            .retryPolicy(RetryOneTime(100)).build()
        curator.start()
        open.add(curator)
        assertThat(curator.blockUntilConnected(PROMPTLY.inWholeSeconds.toInt(), TimeUnit.SECONDS))
            .`as`("connected to ZooKeeper").isTrue()
        return curator
    }

    /** Once some client waits for [name]: its node is queued. Off the caller's thread, since the read blocks. */
    override suspend fun awaitSecondWaiting(name: String) = withContext(Dispatchers.IO) {
        Eventually.await(PROMPTLY.toJavaDuration(), "a waiter on '$name'") {
            second.getLockInfo(name).waitingClients() > 0
        }
    }

    @Test
    fun anExpiredSessionStopsWithLockSuspendingAndLetsTheOtherClientIn() =
        assertExpiryStopsTheBlock("expiring:withLock", fenced = false) { block ->
            withLockSuspending { block() }
        }

    @Test
    fun anExpiredSessionStopsWithTokenSuspendingAndLetsTheOtherClientIn() =
        assertExpiryStopsTheBlock("expiring:withToken", fenced = true) { block ->
            (this as FencedLock).withTokenSuspending { block() }
        }

    /**
     * Runs [call] on a lock named [name] of a holder on a Curator client of the test's own, with
     * a block that consumes a channel and has a child coroutine; queues the other client for the
     * lock, expires the holder's session, and checks that everything stopped, the call threw
     * [LockLostException], and the other client got the lock.
     *
     * Not checked: that the block was cancelled before the other client's began. An expiry
     * injected into the client, with no suspended connection before it, ends the session on the
     * server at once (Curator closes the expired handle), and the holder's node goes with it
     * before the loss reaches any listener. A real expiry comes after a suspended connection,
     * which tells the holder first (ZooKeeperFaultTest in relock-zookeeper).
     */
    private fun assertExpiryStopsTheBlock(
        name: String,
        fenced: Boolean,
        call: suspend DistributedLock.(block: suspend CoroutineScope.() -> Unit) -> Any?,
    ): Unit = runBlocking {
        val curator = curator()
        val holder = RelockZooKeeper.builder(curator).root(root).config(config()).build().also(open::add)
        val lock = if (fenced) holder.getFencedLock(name) else holder.getLock(name)
        val history = ConcurrentLinkedQueue<String>()
        val items = Channel<Int>(Channel.UNLIMITED)
        val processed = CopyOnWriteArrayList<Int>()
        val firstProcessed = CompletableDeferred<Unit>()
        val childStarted = CompletableDeferred<Unit>()
        val blockCancelledWith = CompletableDeferred<Throwable>()
        val childCancelledWith = CompletableDeferred<Throwable>()

        val running = async(Dispatchers.Default) {
            runCatching {
                lock.call {
                    history += "holder begins"
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
                        history += "holder cancelled"
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
        val next = async(Dispatchers.Default) {
            second.getLock(name).withLockSuspending {
                history += "next begins"
                "next"
            }
        }
        awaitSecondWaiting(name)
        assertThat(next.isCompleted).`as`("the other client's call while the session lives").isFalse()

        curator.zookeeperClient.zooKeeper.testable.injectSessionExpiration()

        val failure = withTimeout(PROMPTLY) { running.await() }.exceptionOrNull()
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining(name)
        assertThat((failure as LockLostException).lockName()).isEqualTo(name)
        // Curator reports the expiry as LOST: the client ends every hold at once.
        assertThat(failure.cause).isInstanceOf(RelockConnectionException::class.java)
            .hasMessageContaining("session was lost")
        // The release after the loss finds the hold gone; the face suppresses a failed release
        // onto the loss (the Reactor face drops it once the loss was delivered).
        assertThat(failure.suppressed).`as`("failures of the block or the release besides the loss").hasSize(1)
        assertThat(failure.suppressed.single()).isInstanceOf(IllegalMonitorStateException::class.java)
            .hasMessageContaining(name)
        val blockCause = withTimeout(PROMPTLY) { blockCancelledWith.await() }
        assertThat(generateSequence(blockCause) { it.cause }.toList()).`as`("the block's cancellation and its causes")
            .anyMatch { it is LockLostException }
        assertThat(withTimeout(PROMPTLY) { childCancelledWith.await() }).`as`("the child's cancellation")
            .isInstanceOf(CancellationException::class.java)
        assertThat(items.trySend(2).isSuccess).`as`("the block's channel refuses work after the loss").isFalse()
        assertThat(processed).`as`("items processed, none after the loss").containsExactly(1)
        assertThat(withTimeout(SESSION_GONE) { next.await() }).`as`("the other client's block").isEqualTo("next")
        assertThat(history.first()).isEqualTo("holder begins")
        assertThat(history).containsExactlyInAnyOrder("holder begins", "holder cancelled", "next begins")
    }
}
