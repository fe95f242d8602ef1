package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.LockInfo;
import io.relock.Relock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Seed 002's test: 1000 threads call {@code tryLock()} on the same lock at the same instant.
 * Exactly one may win; it keeps the lock until every other thread has had its try.
 */
final class TryLockRace implements Scenario {

    static final String TITLE = "1000 threads race for one lock with tryLock()";

    private static final int THREADS = 1000;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final DemoRedis redis;

    TryLockRace(DemoRedis redis) {
        this.redis = redis;
    }

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return "however many threads try at the same instant, the lock admits exactly one owner.";
    }

    @Override
    public void run(Report.Section section) throws InterruptedException {
        Relock relock = redis.newClient();
        DistributedLock lock = relock.getLock("race");
        AtomicInteger winners = new AtomicInteger();
        AtomicInteger losers = new AtomicInteger();
        AtomicLong slowestTryNanos = new AtomicLong();
        CountDownLatch allTried = new CountDownLatch(THREADS);
        CountDownLatch release = new CountDownLatch(1);

        Crowd crowd = Crowd.gather("racer", THREADS, index -> {
            long start = System.nanoTime();
            boolean won;
            try {
                won = lock.tryLock();
                slowestTryNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
            } finally {
                allTried.countDown();
            }
            if (!won) {
                losers.incrementAndGet();
                return;
            }
            winners.incrementAndGet();
            // The winner holds on until everyone has tried and the holders have been counted.
            try {
                release.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } finally {
                lock.unlock();
            }
        });

        long start = System.nanoTime();
        crowd.open();
        boolean everyoneTried = allTried.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        LockInfo whileHeld = relock.getLockInfo(lock.getName());
        release.countDown();
        boolean finished = crowd.awaitFinished(TIMEOUT);
        boolean freeAfterwards = !lock.isLocked();
        List<Throwable> errors = crowd.errors();

        section.figure("threads (one start gate)", THREADS);
        section.figure("winners", winners.get());
        section.figure("losers (tryLock() == false)", losers.get());
        section.figure("errors", errors.isEmpty() ? "none" : errors.size() + ", first: " + errors.get(0));
        section.figure("all tries answered in", Report.human(elapsed)
                + " (slowest single tryLock(): " + Report.human(Duration.ofNanos(slowestTryNanos.get())) + ")");
        section.figure("holders on Redis meanwhile", whileHeld.holders().size() + " " + whileHeld.holders());
        section.figure("free again after unlock()", freeAfterwards ? "yes" : "no");

        boolean passed = everyoneTried && finished && errors.isEmpty() && winners.get() == 1
                && losers.get() == THREADS - 1 && whileHeld.holders().size() == 1 && freeAfterwards;
        section.verdict(passed,
                "exactly 1 of " + THREADS + " simultaneous tryLock() calls won, Redis showed a single holder,"
                        + " and the lock was free after the winner's unlock()",
                "expected 1 winner and " + (THREADS - 1) + " losers without errors, got " + winners.get()
                        + " winners, " + losers.get() + " losers, " + errors.size() + " errors"
                        + (everyoneTried && finished ? "" : "; some threads did not finish within " + TIMEOUT));
    }
}
