package io.relock.kotlin

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import com.zaxxer.hikari.metrics.IMetricsTracker
import com.zaxxer.hikari.metrics.MetricsTrackerFactory
import io.relock.DistributedLock
import io.relock.FencedLock
import io.relock.LockForceUnlockedException
import io.relock.LockLostException
import io.relock.LockObserver
import io.relock.Relock
import io.relock.RelockConfig
import io.relock.jdbc.RelockJdbc
import io.relock.testkit.Eventually
import io.relock.testkit.PostgresServer
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicLong
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
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test

/**
 * The coroutine face on a real PostgreSQL (relock-jdbc), with two clients, each on a pool of its
 * own. The histories checked: no two holders ([TwoClientFaceContract]); a hold force-unlocked by the other client stops its block (cancelled with its
 * child and its channel, nothing processed after the loss, the call throwing [LockLostException]
 * caused by [LockForceUnlockedException]), for `withLockSuspending` and for `withTokenSuspending`
 * on a fenced lock.
 */
internal class PostgresFaceTest : TwoClientFaceContract() {

    companion object {
        val PROMPTLY: Duration = 10.seconds

        /** A client's statement threads; its pool has one connection more, which PostgreSQL's LISTEN keeps. */
        private const val STATEMENT_THREADS = 4

        private lateinit var postgres: PostgresServer

        @JvmStatic
        @BeforeAll
        fun startPostgres() {
            postgres = PostgresServer.launch()
        }

        @JvmStatic
        @AfterAll
        fun stopPostgres() {
            postgres.close()
        }
    }

    private val open = mutableListOf<AutoCloseable>()

    /** Each test's lock table in a database of its own. */
    private lateinit var url: String
    override lateinit var first: Relock
    override lateinit var second: Relock

    /** Connections the second client's pool took back: each one a statement of that client done. */
    private val secondsStatements = AtomicLong()

    /** Per lock, [secondsStatements] when the second client's first acquire of it began. */
    private val secondAcquiring = ConcurrentHashMap<String, Long>()

    @BeforeEach
    fun startClients() {
        url = postgres.createDatabase()
        first = client(30.seconds)
        second = client(30.seconds, secondsStatements)
        second.addObserver(object : LockObserver {
            override fun onAcquireStart(lockName: String, lockType: String, ownerId: Long): Any? {
                secondAcquiring.putIfAbsent(lockName, secondsStatements.get())
                return null
            }
        })
    }

    @AfterEach
    fun closeAll() {
        open.asReversed().forEach(AutoCloseable::close)
        open.clear()
    }

    private fun client(watchdog: Duration, statements: AtomicLong = AtomicLong()): Relock {
        val pool = HikariConfig().apply {
            jdbcUrl = url
            maximumPoolSize = STATEMENT_THREADS + 1
            metricsTrackerFactory = MetricsTrackerFactory { _, _ ->
                object : IMetricsTracker {
                    override fun recordConnectionUsageMillis(elapsedBorrowedMillis: Long) {
                        statements.incrementAndGet()
                    }
                }
            }
        }
        val dataSource = HikariDataSource(pool).also(open::add)
        return RelockJdbc.builder(dataSource).createTable(true).statementThreads(STATEMENT_THREADS)
            .config(
                RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                    .watchdogTimeout(watchdog.toJavaDuration())
                    .commandTimeout(java.time.Duration.ofSeconds(2))
                    .build(),
            )
            .build().also(open::add)
    }

    /**
     * Returns once an acquire of [name] by the second client is under way and has asked the table
     * since it began: PostgreSQL keeps no queue of waiters to read, so a refused attempt that now
     * waits shows only as a statement of that client done after the acquire started. Off the
     * caller's thread, since the wait blocks.
     */
    override suspend fun awaitSecondWaiting(name: String) = withContext(Dispatchers.IO) {
        Eventually.await(PROMPTLY.toJavaDuration(), "an acquire of '$name' by the second client that asked the table") {
            secondAcquiring[name]?.let { started -> secondsStatements.get() > started } ?: false
        }
    }

    @Test
    fun aForceUnlockByTheOtherClientStopsWithLockSuspending() =
        assertForceUnlockStopsTheBlock("forced:withLock", fenced = false) { block ->
            withLockSuspending { block() }
        }

    @Test
    fun aForceUnlockByTheOtherClientStopsWithTokenSuspending() =
        assertForceUnlockStopsTheBlock("forced:withToken", fenced = true) { block ->
            (this as FencedLock).withTokenSuspending { block() }
        }

    /**
     * Runs [call] on a lock named [name] of a third client, whose watchdog renews every 500 ms so
     * that the loss is noticed soon, with a block that consumes a channel and has a child
     * coroutine; has the second client force-unlock the lock, and checks that everything stopped
     * and the call threw [LockLostException].
     */
    private fun assertForceUnlockStopsTheBlock(
        name: String,
        fenced: Boolean,
        call: suspend DistributedLock.(block: suspend CoroutineScope.() -> Unit) -> Any?,
    ): Unit = runBlocking {
        val holder = client(1500.milliseconds)
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

        assertThat(second.forceUnlock(name)).`as`("force-unlocked by the other client").isTrue()

        val failure = withTimeout(PROMPTLY) { running.await() }.exceptionOrNull()
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining(name)
        assertThat((failure as LockLostException).lockName()).isEqualTo(name)
        // The row keeps who was force-unlocked: the renewal tells that from a lease that ran out.
        assertThat(failure.cause).isInstanceOf(LockForceUnlockedException::class.java)
        // The release after the loss finds the hold gone; the face suppresses that onto the loss.
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
    }
}
