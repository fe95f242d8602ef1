package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.LockInfo;
import io.relock.Relock;
import java.time.Duration;
import java.util.Set;

/**
 * Seed 004, experiment 1: a thread takes a lock with {@code lock()} (no lease) and never
 * unlocks it. The watchdog renews the lease for as long as the holder's client lives, so the
 * lock is never freed; once the client is gone (closed here, crashed in real life) the renewals
 * stop and the lock expires within one lease.
 */
final class ForgottenUnlock extends WatchdogExperiment {

    static final String TITLE = "Seed 004, experiment 1: no lease and no unlock()";

    private static final String LOCK = "experiment-1";
    private static final double LEASES_OBSERVED = 3.5;
    private static final Duration SAMPLE_INTERVAL = Duration.ofMillis(50);
    /** Polling granularity and round trips on top of the lease when timing the expiry. */
    private static final Duration EXPIRY_TOLERANCE = Duration.ofMillis(250);

    ForgottenUnlock(DemoRedis redis, Duration watchdogTimeout) {
        super(redis, watchdogTimeout, TITLE,
                "the watchdog keeps a forgotten lock held for as long as its client lives; when the client"
                        + " goes, the lock expires within one lease.");
    }

    @Override
    public void run(Report.Section section) throws InterruptedException {
        Relock holderClient = redis.newClient(watchdogTimeout);
        Relock observer = redis.newClient();
        DistributedLock lock = holderClient.getLock(LOCK);
        lock.lock(); // and never unlock()
        String holder = holderClient.clientId() + ":" + Thread.currentThread().getId();
        section.figure("lease (watchdog timeout)", Report.human(watchdogTimeout) + ", renewed every "
                + Report.human(watchdogTimeout.dividedBy(3)));
        section.figure("holder", holder);

        Observation observation = observe(observer, holder);
        boolean othersLockedOut = !observer.getLock(LOCK).tryLock();
        section.figure("watched for", Report.human(observation.duration) + " = " + LEASES_OBSERVED
                + " leases, " + observation.samples + " samples via getLockInfo()");
        section.figure("samples with the lock held", observation.held + " of " + observation.samples);
        section.figure("remaining lease seen", observation.lowestTtl + " to " + observation.highestTtl + " ms");
        section.figure("renewals seen (lease went up)", observation.renewals);
        section.figure("another client's tryLock()", othersLockedOut ? "false (locked out)" : "true");

        long ttlAtClose = observer.getLockInfo(LOCK).remainTimeToLive();
        holderClient.close();
        long closedAt = System.nanoTime();
        boolean expired = Poll.until(watchdogTimeout.multipliedBy(3), Duration.ofMillis(10),
                () -> !observer.getLockInfo(LOCK).isLocked());
        Duration expiredAfter = Duration.ofNanos(System.nanoTime() - closedAt);
        section.figure("holder's client closed", "lease left then: " + ttlAtClose + " ms");
        section.figure("lock expired", expired ? Report.human(expiredAfter) + " after close" : "NOT within "
                + Report.human(watchdogTimeout.multipliedBy(3)));
        boolean freeForOthers = expired && tryAndRelease(observer.getLock(LOCK));
        section.figure("another client's tryLock() now", freeForOthers ? "true" : "false");

        boolean renewedThroughout = observation.held == observation.samples && observation.renewals >= 3
                && observation.duration.compareTo(watchdogTimeout.multipliedBy(3)) > 0;
        boolean expiredInTime = expired && expiredAfter.compareTo(watchdogTimeout.plus(EXPIRY_TOLERANCE)) <= 0;
        section.verdict(renewedThroughout && othersLockedOut && expiredInTime && freeForOthers,
                "held " + Report.human(observation.duration) + " on a " + Report.human(watchdogTimeout)
                        + " lease (" + observation.renewals + " renewals), locked out other clients, and expired "
                        + Report.human(expiredAfter) + " after its client closed",
                "expected the lock held at every sample with 3+ renewals, other clients locked out, and expiry"
                        + " within " + Report.human(watchdogTimeout.plus(EXPIRY_TOLERANCE)) + " of close");
    }

    /** What the observer saw while the lock was held; filled in by the sampling thread only. */
    private static final class Observation {
        Duration duration;
        int samples;
        int held;
        int renewals;
        long lowestTtl = Long.MAX_VALUE;
        long highestTtl = Long.MIN_VALUE;
        long previousTtl = Long.MAX_VALUE;
    }

    /** Samples the lock for {@link #LEASES_OBSERVED} leases from another client. */
    private Observation observe(Relock observer, String holder) throws InterruptedException {
        Observation seen = new Observation();
        long start = System.nanoTime();
        Duration window = Duration.ofMillis((long) (watchdogTimeout.toMillis() * LEASES_OBSERVED));
        seen.samples = Poll.during(window, SAMPLE_INTERVAL, () -> {
            LockInfo info = observer.getLockInfo(LOCK);
            long ttl = info.remainTimeToLive();
            if (info.holders().keySet().equals(Set.of(holder)) && ttl > 0) {
                seen.held++;
            }
            seen.lowestTtl = Math.min(seen.lowestTtl, ttl);
            seen.highestTtl = Math.max(seen.highestTtl, ttl);
            if (ttl > seen.previousTtl) {
                seen.renewals++;
            }
            seen.previousTtl = ttl;
        });
        seen.duration = Duration.ofNanos(System.nanoTime() - start);
        return seen;
    }

    private static boolean tryAndRelease(DistributedLock lock) {
        if (!lock.tryLock()) {
            return false;
        }
        lock.unlock();
        return true;
    }
}
