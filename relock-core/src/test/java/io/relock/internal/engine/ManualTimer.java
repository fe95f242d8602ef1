package io.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A timer that only runs what the test tells it to: no thread, no real time. Delays are recorded, not waited;
 * {@link #elapse()} runs everything pending as if its time had come, so a test (or a model
 * checker) decides when each timeout fires.
 */
public final class ManualTimer implements Timer {

    final List<ManualTimeout> pending = new ArrayList<>();

    @Override
    public synchronized Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        ManualTimeout timeout = new ManualTimeout(this, task, unit.toMillis(delay));
        pending.add(timeout);
        return timeout;
    }

    @Override
    public Set<Timeout> stop() {
        return Set.of();
    }

    /** How many timeouts wait to be run, cancelled ones included. */
    public synchronized int pendingCount() {
        return pending.size();
    }

    /**
     * Runs every timeout not cancelled that was pending when called; timeouts that those
     * schedule wait for the next call (so one call is one watchdog tick).
     */
    public void elapse() throws Exception {
        List<ManualTimeout> due;
        synchronized (this) {
            due = new ArrayList<>(pending);
            pending.clear();
        }
        for (ManualTimeout timeout : due) {
            if (!timeout.isCancelled()) {
                timeout.task().run(timeout);
            }
        }
    }

    static final class ManualTimeout implements Timeout {

        private final Timer timer;
        private final TimerTask task;
        /** The delay asked for, which this timer does not wait (tests read it). */
        final long delayMillis;
        private volatile boolean cancelled;

        ManualTimeout(Timer timer, TimerTask task, long delayMillis) {
            this.timer = timer;
            this.task = task;
            this.delayMillis = delayMillis;
        }

        @Override
        public Timer timer() {
            return timer;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return false;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean cancel() {
            cancelled = true;
            return true;
        }
    }
}
