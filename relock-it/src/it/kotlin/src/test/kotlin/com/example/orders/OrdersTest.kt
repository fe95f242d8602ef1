package com.example.orders

import io.relock.Relock
import io.relock.RelockConfig
import io.relock.testkit.RedisExtension
import io.relock.testkit.RedisServer
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/** The Kotlin example of docs/reactive-and-kotlin.md against a Redis server that relock-testkit starts. */
class OrdersTest {

    companion object {
        @JvmField
        @RegisterExtension
        val redis: RedisExtension = RedisExtension.perClass()
    }

    private lateinit var relock: Relock
    private lateinit var other: Relock
    private val seen = mutableListOf<String>()

    @BeforeEach
    fun start(server: RedisServer) {
        val config = RelockConfig.builder().singleServer(server.uri()).build()
        relock = Relock.create(config)
        other = Relock.create(config)
    }

    @AfterEach
    fun close() {
        relock.close()
        other.close()
    }

    private fun orders() = Orders(
        relock,
        payments = object : Payments {
            override suspend fun charge(orderId: Long): String {
                seen += "charging, locked elsewhere: ${other.getLock("order:$orderId").isLocked}"
                return "receipt-$orderId"
            }
        },
        audit = object : Audit {
            override suspend fun record(receipt: String) {
                val holds = relock.getLockInfo("order:42").holders().values
                seen += "recording $receipt, holds: $holds"
            }
        },
        reports = object : Reports {
            override suspend fun send() {
                seen += "report sent"
            }
        },
    )

    @Test
    fun chargeHoldsTheOrderLockAcrossDispatchersAndReentersForTheAudit(): Unit = runBlocking {
        assertThat(orders().charge(42)).isEqualTo("receipt-42")

        assertThat(seen).containsExactly("charging, locked elsewhere: true", "recording receipt-42, holds: [2]")
        assertThat(other.getLock("order:42").isLocked).isFalse()
    }

    @Test
    fun theDailyReportIsSentOnlyWhenNoOtherNodeHoldsItsLock(): Unit = runBlocking {
        val elsewhere = other.getLock("daily-report")
        elsewhere.lock()
        try {
            assertThat(orders().sendDailyReport()).isFalse()
        } finally {
            elsewhere.unlock()
        }
        assertThat(orders().sendDailyReport()).isTrue()
        assertThat(seen).containsExactly("report sent")
    }
}
