package io.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.internal.backend.Budget;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.model.MemoryStore;
import io.relock.internal.support.Args;
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
        MemoryStore store = new MemoryStore();
        long lease = 5_000;
        store.immediate().simple("last-ms", "channel")
                .acquire(new Request("other:1", lease, 0, new Budget(0, 0), false, 0, 0, false));
        store.advance(lease); // the holder's last millisecond: PTTL answers 0
        AtomicInteger attempts = new AtomicInteger();
        store.afterEachCommand(script -> {
            if (script.equals("simple_acquire")) {
                attempts.incrementAndGet();
            }
        });
        Acquisition acquisition = new Acquisition(client.lock(store.immediate().simple("last-ms", "channel"), "last-ms",
                "channel"), 7, TimeUnit.SECONDS.toNanos(60), Args.WATCHDOG_LEASE);
        acquisition.begin();

        assertThat(attempts).as("the first attempt, and the one after subscribing").hasValue(2);
        assertThat(client.timer.pending).as("the waiter parked until the TTL is over").singleElement()
                .satisfies(timeout -> assertThat(timeout.delayMillis).isEqualTo(1));
        store.advance(1);
        client.timer.elapse();
        assertThat(acquisition.result.get(1, TimeUnit.SECONDS).acquired()).isTrue();
    }
}
