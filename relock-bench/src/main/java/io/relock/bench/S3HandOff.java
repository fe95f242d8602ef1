package io.relock.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * S3, hand-off: one holder and 1 or 8 waiters blocked in {@code lock()} on one name. The holder
 * keeps the lock {@value #HOLD_MILLIS} ms (so every waiter is parked on the unlock message),
 * notes the time and calls {@code unlock()}; the hand-off time is from there to the return of
 * the next {@code lock()} in another thread. The releasing thread only asks again once someone
 * else got the lock, so each release is a real hand-off to a waiter.
 */
final class S3HandOff implements Scenario {

    static final long HOLD_MILLIS = 2;

    @Override
    public String id() {
        return "S3";
    }

    @Override
    public String title() {
        return "hand-off: unlock() to the next waiter's lock() return";
    }

    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of("S3/w1") : List.of("S3/w1", "S3/w8");
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        int waiters = Integer.parseInt(caseId.substring("S3/w".length()));
        CaseResult result = new CaseResult(caseId, "S3 hand-off, " + waiters + (waiters == 1 ? " waiter" : " waiters"));
        try (LockLibrary client = context.connect()) {
            int threads = waiters + 1;
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                locks[i] = client.lock("bench:s3:handoff");
            }
            Relay relay = new Relay();
            Load.Outcome outcome = Load.run(threads, worker -> relay.cycle(locks[worker.index], worker),
                    context.timing(), List.of(context.admin()));
            return result.load(outcome, Metric.HANDOFFS_PER_S, Metric.HANDOFF_P50_US, Metric.HANDOFF_P99_US);
        }
    }

    /** The shared state of the relay: who released last, and when. */
    private static final class Relay {

        private long acquisitions; // guarded by this
        private volatile long releasedAt;
        private volatile int releasedBy = -1;

        long cycle(Lock lock, Load.Worker worker) throws InterruptedException {
            Load.Phase started = worker.phase();
            lock.lock();
            long acquiredAt = System.nanoTime();
            int previous = releasedBy;
            long handOff = previous >= 0 && previous != worker.index ? acquiredAt - releasedAt : -1;
            long seen;
            synchronized (this) {
                seen = ++acquisitions;
                notifyAll();
            }
            try {
                long until = acquiredAt + TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS);
                for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                    LockSupport.parkNanos(left);
                }
            } finally {
                releasedBy = worker.index;
                releasedAt = System.nanoTime();
                lock.unlock();
            }
            // Let a waiter take it before competing again (blocked, not polling: the waiters
            // need the CPU). Stop waiting once the phase is no longer the one this cycle started
            // in: the others may be pausing, not waiting.
            synchronized (this) {
                while (acquisitions == seen && worker.phase() == started) {
                    wait(1);
                }
            }
            return handOff;
        }
    }
}
