package io.relock.demo;

import java.time.Duration;

/**
 * Seed 004, experiment 3, the correct use: both workers take the lock with a wait and no lease.
 * The watchdog keeps A's lock for all of its work, three times the lease; B waits, gets the
 * lock only once A has released it, and both unlocks succeed.
 */
final class WatchdogOnly extends WatchdogExperiment {

    static final String TITLE = "Seed 004, experiment 3: wait, no lease, let the watchdog renew";

    WatchdogOnly(DemoRedis redis, Duration watchdogTimeout) {
        super(redis, watchdogTimeout, TITLE,
                "without a lease the lock lasts exactly as long as the work, however long: no overlap, clean"
                        + " unlocks, and B gets in right after A.");
    }

    @Override
    public void run(Report.Section section) throws Exception {
        Duration work = watchdogTimeout.multipliedBy(3);
        WorkerPair.Plan plan = new WorkerPair.Plan("experiment-3", work.multipliedBy(2), null, work);
        section.figure("each worker", plan.call() + ", then works " + Report.human(work) + " (3 leases of "
                + Report.human(watchdogTimeout) + ")");
        WorkerPair.Result result = WorkerPair.runOnTwoClients(redis, watchdogTimeout, plan);
        int lostEvents = result.lostEvents();
        result.timeline().printTo(section);

        WorkerPair.Run a = result.a();
        WorkerPair.Run b = result.b();
        section.figure("most holders at once", result.mostInside());
        section.figure("A still held it after its work", a.heldAfterWork() ? "yes" : "no");
        section.figure("B got the lock", b.acquired() ? (b.acquiredAt() - a.unlockAt())
                + " ms after A called unlock()" : "never");
        section.figure("unlocks", "A: " + (a.unlocked() ? "ok" : a.unlockError()) + ", B: "
                + (b.unlocked() ? "ok" : b.unlockError()));
        section.figure("lost-lock listener events", lostEvents == 0 ? "none" : lostEvents);

        boolean passed = a.acquired() && b.acquired() && result.mostInside() == 1 && a.heldAfterWork()
                && b.heldAfterWork() && b.acquiredAt() >= a.unlockAt() && a.unlocked() && b.unlocked()
                && lostEvents == 0;
        section.verdict(passed,
                "each worker held the lock for " + Report.human(work) + " on a " + Report.human(watchdogTimeout)
                        + " lease, never both at once; B got it only after A's unlock(); both unlocks succeeded",
                "expected one holder at a time, B in after A's unlock(), both unlocks fine, no lost locks;"
                        + " got most holders " + result.mostInside() + ", lost events " + lostEvents);
    }
}
