package com.example.orders

// tag::kotlin-imports[]
import io.relock.Relock
import io.relock.kotlin.tryWithLockSuspending
import io.relock.kotlin.withLockSuspending
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
// end::kotlin-imports[]

/** What the Kotlin guide's example charges with: a payment provider. */
interface Payments {
    /** Charges the order and returns the provider's receipt. */
    suspend fun charge(orderId: Long): String
}

/** Where the Kotlin guide's example records what it charged. */
interface Audit {
    /** Records one receipt. */
    suspend fun record(receipt: String)
}

/** What the Kotlin guide's example sends once a day, on one node. */
interface Reports {
    /** Sends the daily report. */
    suspend fun send()
}

/** The Kotlin example of docs/reactive-and-kotlin.md, verbatim between the tags. */
class Orders(
    private val relock: Relock,
    private val payments: Payments,
    private val audit: Audit,
    private val reports: Reports,
) {

    // tag::kotlin-code[]
    suspend fun charge(orderId: Long): String {
        val lock = relock.getLock("order:$orderId")
        return lock.withLockSuspending(wait = 5.seconds) {          // suspends; never blocks a thread
            val receipt = withContext(Dispatchers.IO) { payments.charge(orderId) }  // same owner on IO
            lock.withLockSuspending { audit.record(receipt) }       // re-enters: hold count 2
            receipt
        }                                                           // released, also if cancelled
    }

    suspend fun sendDailyReport(): Boolean =                        // false: another node has it
        relock.getLock("daily-report").tryWithLockSuspending { reports.send(); true } ?: false
    // end::kotlin-code[]
}
