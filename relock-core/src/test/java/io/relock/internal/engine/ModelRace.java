package io.relock.internal.engine;

import io.relock.internal.support.Args;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.Operation;

/**
 * What the acquisition models share: the model client, the acquisition under test, and the moves
 * that come from outside the lock: the caller's interrupt, the client closing, the wait running
 * out. A fresh one per interleaving; a model starts {@link #acquisition} in its constructor.
 */
abstract class ModelRace {

    static final long OWNER = 7;
    static final String FIELD = "client:7";
    static final long WAIT_MILLIS = 10_000;

    final ModelClient client = new ModelClient();
    /** Set once {@link Acquisition#cancel()} has returned. */
    volatile boolean interrupted;
    private final RuntimeException closing = new IllegalStateException("client closing");
    Acquisition acquisition;

    /** Starts the acquisition under test: owner {@link #OWNER}, a {@link #WAIT_MILLIS} wait, the watchdog's lease. */
    void begin(AcquirableLock lock) {
        acquisition = new Acquisition(lock, OWNER, TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS), Args.WATCHDOG_LEASE);
        acquisition.begin();
    }

    /** The waiting caller is interrupted. */
    @Operation(runOnce = true)
    public void interrupt() {
        acquisition.cancel();
        interrupted = true;
    }

    /** The client closes while the acquire is under way. */
    @Operation(runOnce = true)
    public void close() {
        acquisition.abort(closing);
    }

    /** The wait runs out: the clock passes the deadline and every timeout due fires. */
    @Operation(nonParallelGroup = "timer")
    public void timeOut() throws Exception {
        client.clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS + 1));
        client.timer.elapse();
    }
}
