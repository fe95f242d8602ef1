package io.relock.spring

import io.relock.LockNotAcquiredException
import io.relock.Relock
import io.relock.RelockConfig
import io.relock.testkit.Eventually
import io.relock.testkit.RedisExtension
import io.relock.testkit.RedisServer
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

/**
 * [WithLock] on Kotlin `suspend` functions: Spring's AOP runs them as a `Mono`, so the lock is
 * held from the call until the function returns or throws, across suspension points and thread
 * switches, and released when the calling coroutine is cancelled.
 */
class WithLockSuspendTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis: RedisExtension = RedisExtension.perClass()

        private val PROMPTLY: Duration = Duration.ofSeconds(10)
    }

    private lateinit var server: RedisServer
    private lateinit var observer: Relock

    @BeforeEach
    fun connectObserver(server: RedisServer) {
        this.server = server
        observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())
    }

    @AfterEach
    fun closeObserver() {
        observer.close()
    }

    private fun runner(): ApplicationContextRunner = ApplicationContextRunner()
        .withUserConfiguration(TestRelock::class.java)
        .withPropertyValues("test.redis.uri=" + server.uri())
        .withUserConfiguration(AccountsConfig::class.java)

    private fun locked(name: String): Boolean = observer.getLock(name).isLocked

    @Test
    fun aSuspendFunctionHoldsItsLockAcrossSuspensionsAndThreadsAndReleasesWhenItReturns() {
        runner().run { context ->
            val accounts = context.getBean(Accounts::class.java)
            val seen = runBlocking {
                accounts.debit("s1") {
                    yield()
                    withContext(Dispatchers.IO) { locked("acct:s1") }
                }
            }
            assertThat(seen).isTrue()
            assertThat(locked("acct:s1")).isFalse()
        }
    }

    @Test
    fun notAcquiredIsSpringsExceptionAndTheFunctionDoesNotRun() {
        runner().run { context ->
            val accounts = context.getBean(Accounts::class.java)
            val taken = observer.getLock("acct:s2")
            taken.lock()
            try {
                assertThatThrownBy { runBlocking { accounts.debit("s2") { } } }
                    .isInstanceOf(LockNotAcquiredException::class.java).hasMessageContaining("acct:s2")
                runBlocking { accounts.tick("s2") }
                assertThat(accounts.runs()).isZero()
            } finally {
                taken.unlock()
            }
            runBlocking { accounts.tick("s2") }
            assertThat(accounts.runs()).isEqualTo(1)
        }
    }

    @Test
    fun cancellingTheCallingCoroutineReleases() {
        runner().run { context ->
            val accounts = context.getBean(Accounts::class.java)
            runBlocking {
                val call = launch(Dispatchers.Default) { accounts.debit("s3") { awaitCancellation() } }
                Eventually.await(PROMPTLY, "acct:s3 taken") { locked("acct:s3") }
                call.cancelAndJoin()
            }
            Eventually.await(PROMPTLY, "acct:s3 released") { !locked("acct:s3") }
        }
    }

    @Test
    fun aNestedSuspendCallOnTheSameLockReEnters() {
        runner().run { context ->
            val outer = context.getBean(Outer::class.java)
            val holds = runBlocking {
                outer.transfer("s4") {
                    withContext(Dispatchers.IO) { observer.getLockInfo("acct:s4").holders().values.sum() }
                }
            }
            assertThat(holds).isEqualTo(2L)
            assertThat(locked("acct:s4")).isFalse()
        }
    }

    @Test
    fun skipOnASuspendFunctionThatReturnsAValueFailsTheStart() {
        runner().withUserConfiguration(SkippingConfig::class.java).run { context ->
            assertThat(context).hasFailed().failure.hasStackTraceContaining("Skipping.balance(String, Continuation)")
                .hasStackTraceContaining("onNotAcquired = SKIP needs a suspend function returning Unit or a nullable type")
        }
    }

    @Configuration(proxyBeanMethods = false)
    open class AccountsConfig {
        @Bean
        open fun accounts(): Accounts = Accounts()

        @Bean
        open fun outer(accounts: Accounts): Outer = Outer(accounts)
    }

    @Configuration(proxyBeanMethods = false)
    open class SkippingConfig {
        @Bean
        open fun skipping(): Skipping = Skipping()
    }

    open class Accounts {
        private val runs = AtomicInteger()

        open fun runs(): Int = runs.get()

        @WithLock(name = "acct", key = "#id", waitTime = "0")
        open suspend fun <T> debit(id: String, inside: suspend () -> T): T = inside()

        @WithLock(name = "acct", key = "#id", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        open suspend fun tick(id: String) {
            yield()
            runs.incrementAndGet()
        }
    }

    /** Takes the same lock as [Accounts.debit], then calls it from inside its hold. */
    open class Outer(private val accounts: Accounts) {
        @WithLock(name = "acct", key = "#id", waitTime = "0")
        open suspend fun <T> transfer(id: String, inside: suspend () -> T): T =
            withContext(Dispatchers.Default) { accounts.debit(id, inside) }
    }

    open class Skipping {
        @WithLock(name = "acct", key = "#id", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        open suspend fun balance(id: String): String = id
    }
}
