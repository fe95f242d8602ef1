package io.relock.demo;

import java.time.Duration;

/**
 * Seed 004, experiment 2: both workers take the lock with a fixed lease shorter than their
 * work. A's lease runs out while A still works, B gets the lock, and for a while two threads
 * are in the critical section; A's late {@code unlock()} then fails with
 * {@link IllegalMonitorStateException}, and so does B's.
 */
final class LeaseShorterThanWork extends WatchdogExperiment {

    static final String TITLE = "Seed 004, experiment 2: a lease shorter than the work";

    private static final Duration LEASE = Duration.ofMillis(300);
    private static final Duration WORK = Duration.ofMillis(800);
    private static final Duration WAIT = Duration.ofSeconds(2);

    LeaseShorterThanWork(DemoRedis redis, Duration watchdogTimeout) {
        super(redis, watchdogTimeout, TITLE,
                "a fixed lease is not renewed: when it runs out mid-work a second holder gets in, and the late"
                        + " unlock() fails.");
    }

    @Override
    public void run(Report.Section section) throws Exception {
        WorkerPair.Plan plan = new WorkerPair.Plan("experiment-2", WAIT, LEASE, WORK);
        section.figure("each worker", plan.call() + ", then works " + Report.human(WORK));
        WorkerPair.Result result = WorkerPair.runOnTwoClients(redis, watchdogTimeout, plan);
        int lostEvents = result.lostEvents();
        result.timeline().printTo(section);

        section.figure("most holders at once", result.mostInside());
        section.figure("A's unlock()", describeUnlock(result.a()));
        section.figure("B's unlock()", describeUnlock(result.b()));
        section.figure("lost-lock listener events", lostEvents == 0
                ? "none: nothing renews a fixed lease, so nothing notices it end; unlock() is the first to know"
                : lostEvents);

        boolean overlapped = result.a().acquired() && result.b().acquired() && result.mostInside() == 2
                && result.b().acquiredAt() < result.a().unlockAt();
        boolean lateUnlockFailed = result.a().unlockError() != null;
        section.verdict(overlapped && lateUnlockFailed,
                "B got the lock " + result.b().acquiredAt() + " ms in, while A still worked (2 holders at once),"
                        + " and A's unlock() threw IllegalMonitorStateException",
                "expected B to get in while A worked and A's unlock() to throw IllegalMonitorStateException;"
                        + " most holders at once: " + result.mostInside() + ", A's unlock(): " + describeUnlock(result.a()));
    }

    private static String describeUnlock(WorkerPair.Run run) {
        if (!run.acquired()) {
            return "not called (never acquired)";
        }
        return run.unlockError() == null ? "succeeded" : "IllegalMonitorStateException: " + run.unlockError();
    }
}
