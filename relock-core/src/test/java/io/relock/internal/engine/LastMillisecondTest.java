package io.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.support.Args;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A busy lock whose TTL Redis reports as 0 (a hold, or a yield to Redisson's waiters, in its last
 * millisecond) is about to be free: the waiter parks for a millisecond and tries again, not for
 * its whole wait. Before, it parked for the whole wait and, with nobody left to announce a
 * release, slept for 30 s beside a free lock (the bench's mixed-fleet case, twice in 35 runs).
 */
class LastMillisecondTest {

    @Test
    void aTtlOfZeroParksTheWaiterForOneMillisecondNotForItsWholeWait() throws Exception {
        ModelClient client = new ModelClient();
        AtomicInteger attempts = new AtomicInteger();
        ModelClient.Driver driver = new ModelClient.Driver() {
            @Override
            public String type() {
                return "reentrant";
            }

            @Override
            public CompletableFuture<Attempt> acquire(Request request) {
                return CompletableFuture.completedFuture(attempts.incrementAndGet() < 3 ? Attempt.busy(0)
                        : Attempt.acquired(0));
            }

            @Override
            public CompletableFuture<Long> rollback(String field, int countBefore) {
                return CompletableFuture.completedFuture(0L);
            }
        };
        Acquisition acquisition = new Acquisition(client.lock(driver, "last-ms", "channel"), 7,
                TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        acquisition.begin();

        assertThat(attempts).as("the first attempt, and the one after subscribing").hasValue(2);
        assertThat(client.timer.pending).as("the waiter parked until the TTL is over").singleElement()
                .satisfies(timeout -> assertThat(timeout.delayMillis).isEqualTo(1));
        client.timer.elapse();
        assertThat(acquisition.result.get(1, TimeUnit.SECONDS).acquired()).isTrue();
    }
}
