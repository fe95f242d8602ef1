package io.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.RelockConfig;
import io.relock.internal.ClientRuntime;
import io.relock.internal.backend.Budget;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The gateway's budgets are instants of the client's clock, the one its deadlines are measured on. */
class RedisGatewayClockTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(3);

    /** Far from {@link System#nanoTime()}, so that a budget on the wrong clock shows. */
    private final AtomicLong clock = new AtomicLong(Long.MIN_VALUE / 2);
    private ClientRuntime runtime;

    @BeforeEach
    void connect(RedisServer server) {
        RelockConfig config = RelockConfig.builder().singleServer(server.uri()).commandTimeout(COMMAND_TIMEOUT).build();
        runtime = ClientRuntime.start(config, clock::get);
    }

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aCallThatDoesNotWaitMayRetryForTheCommandTimeoutOnTheClientsClock() {
        clock.addAndGet(1_000);

        assertThat(runtime.gateway().budget())
                .isEqualTo(new Budget(clock.get() + COMMAND_TIMEOUT.toNanos(), clock.get()));
    }

    @Test
    void aWaitingCallMayRetryUntilItsDeadlineOnTheClientsClock() {
        long deadline = clock.get() + Duration.ofSeconds(60).toNanos();

        assertThat(runtime.budget(deadline)).as("patient through a restart of the single server until the deadline")
                .isEqualTo(new Budget(deadline, deadline));
        assertThat(runtime.budget(clock.get()).deadlineNanos()).as("at least the command timeout")
                .isEqualTo(clock.get() + COMMAND_TIMEOUT.toNanos());
    }
}
