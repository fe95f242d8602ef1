package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.LockLostEvent;
import io.relock.Relock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Seed 004's two-thread experiments: worker A takes a lock and works while holding it; worker
 * B, on another Relock client (another instance of the service), tries for the same lock once
 * A holds it. Both follow the same {@link Plan}. Everything they do, and every lost-lock event
 * of their clients, goes to a {@link Timeline} that starts with the run; a counter of threads
 * inside the critical section catches two holders at once. One pair runs one plan.
 *
 * <p>{@link #close()} closes both clients.
 */
final class WorkerPair implements AutoCloseable {

    /**
     * How both workers take the lock and how long they hold it.
     *
     * @param lease the lease, or {@code null} for none (the watchdog renews)
     */
    record Plan(String lockName, Duration waitTime, Duration lease, Duration work) {

        String call() {
            return lease == null
                    ? "tryLock(" + Report.human(waitTime) + ")"
                    : "tryLock(" + Report.human(waitTime) + " wait, " + Report.human(lease) + " lease)";
        }
    }

    /**
     * What one worker did; times are milliseconds on the timeline.
     *
     * @param unlockError the message of the exception {@code unlock()} threw, or {@code null}
     */
    record Run(String worker, boolean acquired, long acquiredAt, boolean heldAfterWork, long unlockAt,
            String unlockError) {

        static Run gaveUp(String worker) {
            return new Run(worker, false, -1, false, -1, null);
        }

        boolean unlocked() {
            return acquired && unlockError == null;
        }
    }

    /**
     * Both workers' runs, the most threads seen inside the critical section at once, what
     * happened when, and how many lost-lock events the clients' listeners received.
     */
    record Result(Run a, Run b, int mostInside, Timeline timeline, int lostEvents) {}

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Relock clientA;
    private final Relock clientB;
    private final Timeline timeline = new Timeline();
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger mostInside = new AtomicInteger();
    private final AtomicInteger lostEvents = new AtomicInteger();

    private WorkerPair(Relock clientA, Relock clientB) {
        this.clientA = clientA;
        this.clientB = clientB;
    }

    /**
     * Two new clients with the given watchdog timeout, each with a {@link io.relock.LockListener}
     * that writes lost-lock events to the timeline.
     */
    private static WorkerPair onTwoClients(DemoRedis redis, Duration watchdogTimeout) {
        WorkerPair pair = new WorkerPair(redis.newClient(watchdogTimeout), redis.newClient(watchdogTimeout));
        pair.clientA.addLockListener(pair::onLockLost);
        pair.clientB.addLockListener(pair::onLockLost);
        return pair;
    }

    /** Runs {@code plan} on two new clients, as {@link #run} does, and closes them. */
    static Result runOnTwoClients(DemoRedis redis, Duration watchdogTimeout, Plan plan) throws Exception {
        try (WorkerPair pair = onTwoClients(redis, watchdogTimeout)) {
            return pair.run(plan);
        }
    }

    /**
     * Runs A, then B as soon as A holds the lock (or gave up), and waits for both.
     *
     * @throws Exception if a worker failed unexpectedly or did not finish in time
     */
    Result run(Plan plan) throws Exception {
        timeline.restart();
        CountDownLatch aHasTried = new CountDownLatch(1);
        FutureTask<Run> a = new FutureTask<>(() -> work("A", clientA, plan, aHasTried));
        FutureTask<Run> b = new FutureTask<>(() -> work("B", clientB, plan, new CountDownLatch(1)));
        new Thread(a, "worker-A").start();
        if (!aHasTried.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("worker A did not get an answer to tryLock within " + TIMEOUT);
        }
        new Thread(b, "worker-B").start();
        return new Result(a.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), b.get(TIMEOUT.toMillis(),
                TimeUnit.MILLISECONDS), mostInside.get(), timeline, lostEvents.get());
    }

    private Run work(String who, Relock client, Plan plan, CountDownLatch hasTried) throws InterruptedException {
        DistributedLock lock = client.getLock(plan.lockName());
        timeline.add(who, "calls " + plan.call());
        long acquiredAt;
        try {
            boolean acquired = plan.lease() == null
                    ? lock.tryLock(plan.waitTime().toMillis(), TimeUnit.MILLISECONDS)
                    : lock.tryLock(plan.waitTime().toMillis(), plan.lease().toMillis(), TimeUnit.MILLISECONDS);
            if (!acquired) {
                timeline.add(who, "gave up: the wait ran out");
                return Run.gaveUp(who);
            }
            acquiredAt = enter(who, plan);
        } finally {
            hasTried.countDown();
        }
        try {
            SimulatedWork.takes(plan.work());
        } finally {
            inside.decrementAndGet();
        }
        boolean heldAfterWork = lock.isHeldByCurrentThread();
        long unlockAt = timeline.add(who, "work done; still holds the lock: " + (heldAfterWork ? "yes" : "NO")
                + "; calls unlock()");
        try {
            lock.unlock();
            timeline.add(who, "unlock() returned");
            return new Run(who, true, acquiredAt, heldAfterWork, unlockAt, null);
        } catch (IllegalMonitorStateException e) {
            timeline.add(who, "unlock() threw IllegalMonitorStateException");
            return new Run(who, true, acquiredAt, heldAfterWork, unlockAt, e.getMessage());
        }
    }

    /** Counts the worker into the critical section and records whether it is alone there. */
    private long enter(String who, Plan plan) {
        int now = inside.incrementAndGet();
        mostInside.accumulateAndGet(now, Math::max);
        return timeline.add(who, now == 1
                ? "acquired the lock; works " + Report.human(plan.work())
                : "acquired the lock while the other still works: " + now + " holders at once");
    }

    private void onLockLost(LockLostEvent event) {
        lostEvents.incrementAndGet();
        timeline.add("listener", "lock '" + event.lockName() + "' lost by thread " + event.ownerThreadId()
                + (event.cause() == null ? "" : ": " + event.cause()));
    }

    @Override
    public void close() {
        clientA.close();
        clientB.close();
    }
}
