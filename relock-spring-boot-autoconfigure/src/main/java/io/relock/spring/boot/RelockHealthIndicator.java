package io.relock.spring.boot;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.relock.LockObserver;
import io.relock.Relock;
import io.relock.RelockException;
import io.relock.WatchdogTickEvent;

/**
 * The health indicator {@code relock}: whether this application's {@link Relock} client can
 * keep its locks.
 *
 * <ul>
 *   <li>UP when a read through the client reaches its store, Redis, the database or ZooKeeper
 *       (the lock info of the name {@value #PROBE_NAME}; nothing is written) and the watchdog
 *       keeps time.</li>
 *   <li>DOWN when that read fails (the store unreachable, a timeout, a refused command), with
 *       the error, which begins with the store's name ({@code relock.store}); after at most the
 *       client's command timeout. DOWN at once while the client knows
 *       it is not connected ({@link Relock#isConnected()}): after a start without Redis
 *       ({@code relock.require-redis-at-startup=false}), or while it reconnects.</li>
 *   <li>DOWN when the watchdog's last tick started more than one watchdog timeout late (a
 *       paused JVM, a starved timer thread: held locks may already have expired), or when no
 *       tick was seen for two watchdog timeouts (it ticks every third of one). The next tick on
 *       time makes it UP again.</li>
 * </ul>
 *
 * <p>Details: {@code clientId}, {@code topology}, {@code heldLocks} (how many holds the client
 * has) and {@code watchdogLagMillis} (how late the last tick started). In a Redis Cluster the
 * read reaches the master of the probe's slot only.
 */
public final class RelockHealthIndicator extends AbstractHealthIndicator implements AutoCloseable {

    /** The lock name whose info the check reads; nobody holds it. */
    static final String PROBE_NAME = "relock:health";

    private final Relock relock;
    private final String store;
    private final LongSupplier nanoTime;
    private final long watchdogTimeoutNanos;
    private final LockObserver ticks = new LockObserver() {
        @Override
        public void onWatchdogTick(WatchdogTickEvent event) {
            ticked(event);
        }
    };
    private volatile long lastLagNanos;
    private volatile long lastTickNanos;

    /** An indicator on Redis that is not told of ticks until registered; {@link #register} is the way in. */
    RelockHealthIndicator(Relock relock, LongSupplier nanoTime) {
        this(relock, "Redis", nanoTime);
    }

    private RelockHealthIndicator(Relock relock, String store, LongSupplier nanoTime) {
        super("Relock health check failed");
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.store = store;
        this.nanoTime = nanoTime;
        this.watchdogTimeoutNanos = relock.config().watchdogTimeout().toNanos();
        this.lastTickNanos = nanoTime.getAsLong();
    }

    /**
     * An indicator that observes {@code relock}'s watchdog from now until {@link #close()};
     * {@code store} names where the locks are, in its errors.
     */
    static RelockHealthIndicator register(Relock relock, String store, LongSupplier nanoTime) {
        RelockHealthIndicator indicator = new RelockHealthIndicator(relock, store, nanoTime);
        relock.addObserver(indicator.ticks);
        return indicator;
    }

    /** What the client's observer reports; package-private for tests that feed a late tick. */
    void ticked(WatchdogTickEvent event) {
        lastLagNanos = event.lagNanos();
        lastTickNanos = nanoTime.getAsLong();
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("clientId", relock.clientId())
                .withDetail("topology", relock.config().topology().name())
                .withDetail("heldLocks", relock.heldLocks().size())
                .withDetail("watchdogLagMillis", TimeUnit.NANOSECONDS.toMillis(lastLagNanos));
        if (!StartWithoutRedis.connected(relock)) {
            builder.down().withDetail("error", store + ": not connected; the client keeps trying to connect");
            return;
        }
        try {
            relock.getLockInfo(PROBE_NAME);
        } catch (RelockException | IllegalStateException e) {
            builder.down().withDetail("error", store + ": " + e.getMessage());
            return;
        }
        long lag = lastLagNanos;
        long silence = nanoTime.getAsLong() - lastTickNanos;
        if (lag > watchdogTimeoutNanos) {
            builder.down().withDetail("error", "the watchdog's last tick started " + millis(lag)
                    + " late, more than the watchdog timeout " + millis(watchdogTimeoutNanos));
        } else if (silence > 2 * watchdogTimeoutNanos) {
            builder.down().withDetail("error", "the watchdog has not ticked for " + millis(silence));
        } else {
            builder.up();
        }
    }

    private static String millis(long nanos) {
        return Duration.ofNanos(nanos).toMillis() + " ms";
    }

    /** Stops observing the client, which may outlive the context that made this indicator. */
    @Override
    public void close() {
        relock.removeObserver(ticks);
    }
}
