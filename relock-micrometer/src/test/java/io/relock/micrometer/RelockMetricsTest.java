package io.relock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The meters of {@link RelockMetrics}, fed by a client on a real Redis. */
class RelockMetricsTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    /** Generous bound for what should happen promptly; never a performance claim. */
    static final Duration PROMPTLY = Duration.ofSeconds(10);
    /** A watchdog that ticks every 500 ms, for tests of renewals and lost leases. */
    static final Duration SHORT_WATCHDOG = Duration.ofMillis(1500);

    private RedisServer server;
    private Relock relock;
    private Relock other;
    private RelockMetrics metrics;
    private SimpleMeterRegistry registry;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        relock = client(Duration.ofSeconds(30));
        other = client(Duration.ofSeconds(30));
        registry = new SimpleMeterRegistry();
        metrics = new RelockMetrics(relock);
        metrics.bindTo(registry);
    }

    @AfterEach
    void stop() {
        metrics.close();
        relock.close();
        other.close();
    }

    private Relock client(Duration watchdog) {
        return Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
                .watchdogTimeout(watchdog)
                .commandTimeout(Duration.ofSeconds(1))
                .build());
    }

    /** A client on a short watchdog, measured by {@link #metrics} instead of the default one. */
    private Relock shortWatchdogClient() {
        metrics.close();
        relock.close();
        relock = client(SHORT_WATCHDOG);
        metrics = new RelockMetrics(relock);
        metrics.bindTo(registry);
        return relock;
    }

    private static Timer timer(MeterRegistry registry, String name, String... tags) {
        return registry.get(name).tags(tags).timer();
    }

    private static long waits(MeterRegistry registry, String lock, String outcome) {
        Timer timer = registry.find("relock.lock.wait").tags("lock", lock, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    private static int active(MeterRegistry registry, String lock) {
        LongTaskTimer timer = registry.find("relock.lock.active").tags("lock", lock).longTaskTimer();
        return timer == null ? 0 : timer.activeTasks();
    }

    private static double counted(MeterRegistry registry, String name, String... tags) {
        Counter counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void awaitWaiting(RedisServer server, String name) {
        Eventually.await(PROMPTLY, "a waiter subscribed to '" + name + "'", () -> {
            List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}");
            return ((Number) reply.get(1)).longValue() > 0;
        });
    }

    @Test
    void anAcquireAndItsReleaseAreTimedWithTheLockNameTypeAndOutcome() {
        DistributedLock lock = relock.getLock("orders");
        lock.lock();

        Timer wait = timer(registry, "relock.lock.wait", "lock", "orders", "type", "reentrant", "outcome", "acquired");
        assertThat(wait.count()).isEqualTo(1);
        assertThat(wait.getId().getTags()).extracting(t -> t.getKey()).containsExactlyInAnyOrder("lock", "type", "outcome");
        assertThat(wait.getId().getDescription()).isNotBlank();
        LongTaskTimer active = registry.get("relock.lock.active").tags("lock", "orders", "type", "reentrant")
                .longTaskTimer();
        assertThat(active.activeTasks()).isEqualTo(1);
        assertThat(registry.find("relock.lock.hold").timer()).isNull();

        lock.unlock();

        Timer hold = timer(registry, "relock.lock.hold", "lock", "orders", "type", "reentrant", "outcome", "released");
        assertThat(hold.count()).isEqualTo(1);
        assertThat(hold.getId().getDescription()).isNotBlank();
        assertThat(active.activeTasks()).isZero();
    }

    @Test
    void aReentryIsAnAcquireButNotASecondHold() {
        DistributedLock lock = relock.getLock("nested");
        lock.lock();
        lock.lock();
        assertThat(waits(registry, "nested", "acquired")).isEqualTo(2);
        assertThat(active(registry, "nested")).isEqualTo(1);

        lock.unlock();
        assertThat(registry.find("relock.lock.hold").timer()).isNull();
        assertThat(active(registry, "nested")).isEqualTo(1);

        lock.unlock();
        assertThat(timer(registry, "relock.lock.hold", "lock", "nested", "outcome", "released").count()).isEqualTo(1);
        assertThat(active(registry, "nested")).isZero();
    }

    @Test
    void noTagCarriesAnOwnerOrClientId() {
        DistributedLock lock = relock.getLock("tags");
        lock.lock();
        lock.unlock();
        String clientId = relock.clientId();
        String threadId = Long.toString(Thread.currentThread().getId());
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getTags()).allSatisfy(tag -> {
                assertThat(tag.getValue()).doesNotContain(clientId);
                assertThat(tag.getValue()).isNotEqualTo(threadId);
            });
        }
    }

    @Test
    void aTryLockThatFindsTheLockHeldIsATimeout() throws Exception {
        DistributedLock held = other.getLock("busy");
        held.lock();
        DistributedLock lock = relock.getLock("busy");

        assertThat(lock.tryLock()).isFalse();
        assertThat(lock.tryLock(50, TimeUnit.MILLISECONDS)).isFalse();

        assertThat(waits(registry, "busy", "timeout")).isEqualTo(2);
        assertThat(waits(registry, "busy", "acquired")).isZero();
        assertThat(active(registry, "busy")).isZero();
        held.unlock();
    }

    @Test
    void anInterruptedWaitIsReportedAsInterrupted() throws Exception {
        DistributedLock held = other.getLock("interrupted");
        held.lock();
        DistributedLock lock = relock.getLock("interrupted");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, "interrupted-waiter");
        waiter.start();
        awaitWaiting(server, "interrupted");

        waiter.interrupt();
        waiter.join(PROMPTLY.toMillis());

        assertThat(waiter.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(waits(registry, "interrupted", "interrupted")).isEqualTo(1);
        held.unlock();
    }

    @Test
    void anAcquireThatFailsIsAnError() {
        DistributedLock lock = relock.getLock("down");
        server.kill();

        assertThatThrownBy(lock::tryLock).isInstanceOf(RuntimeException.class);

        assertThat(waits(registry, "down", "error")).isEqualTo(1);
        assertThat(active(registry, "down")).isZero();
    }

    @Test
    void aHoldRemovedByAnotherClientsForceUnlockIsCountedAsForced() {
        Relock relock = shortWatchdogClient();
        relock.getLock("seized").lock();

        assertThat(other.forceUnlock("seized")).isTrue();

        Eventually.await(PROMPTLY, "the loss counted",
                () -> counted(registry, "relock.lock.lost", "lock", "seized", "cause", "forced") == 1);
        assertThat(registry.find("relock.lock.lost").tags("cause", "expired").counter()).isNull();
    }

    @Test
    void aLeaseFoundGoneIsCountedAsLostAndTheUnlockAsALostHold() {
        Relock relock = shortWatchdogClient();
        DistributedLock lock = relock.getLock("vanishing");
        lock.lock();

        server.command("DEL", "vanishing");
        Eventually.await(PROMPTLY, "the loss counted",
                () -> counted(registry, "relock.lock.lost", "lock", "vanishing", "cause", "expired") == 1);
        // The tick reports its totals once all its renewals are back, just after the loss itself.
        Eventually.await(PROMPTLY, "the tick's loss counted",
                () -> counted(registry, "relock.watchdog.renewals", "outcome", "lost") == 1);

        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(timer(registry, "relock.lock.hold", "lock", "vanishing", "type", "reentrant", "outcome", "lost")
                .count()).isEqualTo(1);
        assertThat(registry.find("relock.lock.hold").tags("outcome", "released").timer()).isNull();
        assertThat(active(registry, "vanishing")).isZero();
    }

    @Test
    void forceUnlocksAreCountedByWhetherTheyRemovedALock() {
        other.getLock("stuck").lock();
        DistributedLock lock = relock.getLock("stuck");

        lock.forceUnlock();
        lock.forceUnlock();

        assertThat(counted(registry, "relock.lock.force.unlocks", "lock", "stuck", "type", "reentrant", "removed", "true"))
                .isEqualTo(1);
        assertThat(counted(registry, "relock.lock.force.unlocks", "lock", "stuck", "type", "reentrant", "removed", "false"))
                .isEqualTo(1);
    }

    @Test
    void theWatchdogsRenewalsAndLagAreRecorded() {
        Relock relock = shortWatchdogClient();
        DistributedLock lock = relock.getLock("renewed");
        lock.lock();
        try {
            Eventually.await(PROMPTLY, "two renewals counted",
                    () -> counted(registry, "relock.watchdog.renewals", "outcome", "renewed") >= 2);
            assertThat(registry.get("relock.watchdog.lag").timer().count()).isPositive();
            assertThat(counted(registry, "relock.watchdog.renewals", "outcome", "lost")).isZero();
            // Renewed holds stay active: the check for holds no longer held leaves them alone.
            assertThat(active(registry, "renewed")).isEqualTo(1);
        } finally {
            lock.unlock();
        }
        assertThat(active(registry, "renewed")).isZero();
    }

    @Test
    void theWatchdogsMetersExistOnceBound() {
        assertThat(registry.get("relock.watchdog.renewals").counters()).hasSize(3);
        assertThat(registry.get("relock.watchdog.lag").timer().getId().getDescription()).isNotBlank();
    }

    @Test
    void aFixedLeaseLeftToRunOutStopsBeingActive() {
        Relock relock = shortWatchdogClient();
        DistributedLock lock = relock.getLock("left");
        lock.lock(200, TimeUnit.MILLISECONDS);
        assertThat(active(registry, "left")).isEqualTo(1);

        Eventually.await(PROMPTLY, "the expired hold no longer active", () -> active(registry, "left") == 0);
        assertThat(registry.find("relock.lock.hold").timer()).isNull();
    }

    @Test
    void everyLockTypeReportsItsType() throws Exception {
        relock.getFairLock("t-fair").lock();
        relock.getFencedLock("t-fenced").lock();
        relock.getSpinLock("t-spin").lock();
        relock.getSimpleLock("t-simple").lock();
        DistributedReadWriteLock rw = relock.getReadWriteLock("t-rw");
        rw.readLock().lock();
        DistributedReadWriteLock rw2 = relock.getReadWriteLock("t-rw2");
        rw2.writeLock().lock();

        assertThat(registry.get("relock.lock.wait").timers())
                .extracting(t -> t.getId().getTag("lock") + "=" + t.getId().getTag("type"))
                .containsExactlyInAnyOrder("t-fair=fair", "t-fenced=fenced", "t-spin=spin", "t-simple=simple",
                        "t-rw=read", "t-rw2=write");

        relock.getFairLock("t-fair").unlock();
        relock.getFencedLock("t-fenced").unlock();
        relock.getSpinLock("t-spin").unlock();
        relock.getSimpleLock("t-simple").unlock();
        rw.readLock().unlock();
        rw2.writeLock().unlock();
        assertThat(registry.get("relock.lock.hold").timers())
                .extracting(t -> t.getId().getTag("type"))
                .containsExactlyInAnyOrder("fair", "fenced", "spin", "simple", "read", "write");
        assertThat(registry.get("relock.lock.active").longTaskTimers())
                .allSatisfy(t -> assertThat(t.activeTasks()).isZero());
    }

    @Test
    void anAsyncOwnersHoldIsMeasuredLikeAThreads() throws Exception {
        DistributedLock lock = relock.getLock("async");
        CompletableFuture<Void> locked = lock.lockAsync(4242L).toCompletableFuture();
        locked.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(active(registry, "async")).isEqualTo(1);
        lock.unlockAsync(4242L).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(active(registry, "async")).isZero();
        assertThat(timer(registry, "relock.lock.hold", "lock", "async").count()).isEqualTo(1);
    }

    @Test
    void pastTheCapEveryFurtherLockNameIsReportedAsOther() {
        for (int i = 0; i < 150; i++) {
            DistributedLock lock = relock.getLock("capped-" + i);
            lock.lock();
            lock.unlock();
        }
        List<Timer> waits = List.copyOf(registry.get("relock.lock.wait").timers());
        Set<String> names = waits.stream().map(t -> t.getId().getTag("lock")).collect(Collectors.toSet());
        assertThat(names).hasSize(RelockMetrics.DEFAULT_MAX_LOCK_NAMES + 1).contains("_other");
        assertThat(names).contains("capped-0", "capped-99").doesNotContain("capped-100", "capped-149");
        assertThat(waits.stream().mapToLong(Timer::count).sum()).isEqualTo(150);
        assertThat(timer(registry, "relock.lock.wait", "lock", "_other").count()).isEqualTo(50);
        assertThat(timer(registry, "relock.lock.hold", "lock", "_other").count()).isEqualTo(50);
    }

    @Test
    void aSmallerCapIsHonoured() {
        metrics.close();
        SimpleMeterRegistry small = new SimpleMeterRegistry();
        try (RelockMetrics capped = new RelockMetrics(relock, 2)) {
            capped.bindTo(small);
            for (String name : List.of("a", "b", "c", "d", "a")) {
                DistributedLock lock = relock.getLock(name);
                lock.lock();
                lock.unlock();
            }
        }
        assertThat(small.get("relock.lock.wait").timers())
                .extracting(t -> t.getId().getTag("lock") + ":" + t.count())
                .containsExactlyInAnyOrder("a:2", "b:1", "_other:2");
    }

    @Test
    void everyBoundRegistryGetsTheMeters() {
        SimpleMeterRegistry second = new SimpleMeterRegistry();
        metrics.bindTo(second);
        metrics.bindTo(second); // again: no effect, not counted twice

        DistributedLock lock = relock.getLock("shared");
        lock.lock();
        assertThat(active(registry, "shared")).isEqualTo(1);
        assertThat(active(second, "shared")).isEqualTo(1);
        lock.unlock();

        for (MeterRegistry each : List.of(registry, second)) {
            assertThat(waits(each, "shared", "acquired")).isEqualTo(1);
            assertThat(timer(each, "relock.lock.hold", "lock", "shared").count()).isEqualTo(1);
            assertThat(active(each, "shared")).isZero();
        }
    }

    @Test
    void eventsBeforeTheFirstBindAreNotRecorded() {
        metrics.close();
        SimpleMeterRegistry later = new SimpleMeterRegistry();
        try (RelockMetrics unbound = new RelockMetrics(relock)) {
            DistributedLock lock = relock.getLock("early");
            lock.lock();
            lock.unlock();
            unbound.bindTo(later);
            assertThat(later.find("relock.lock.wait").timer()).isNull();

            lock.lock();
            lock.unlock();
            assertThat(waits(later, "early", "acquired")).isEqualTo(1);
        }
    }

    @Test
    void closeStopsRecordingAndEndsActiveHolds() {
        DistributedLock lock = relock.getLock("closing");
        lock.lock();
        LongTaskTimer active = registry.get("relock.lock.active").tags("lock", "closing").longTaskTimer();
        assertThat(active.activeTasks()).isEqualTo(1);

        metrics.close();
        metrics.close(); // idempotent

        assertThat(active.activeTasks()).isZero();
        lock.unlock();
        lock.lock();
        lock.unlock();
        relock.getLock("after-close").forceUnlock();
        assertThat(waits(registry, "closing", "acquired")).isEqualTo(1);
        assertThat(registry.find("relock.lock.hold").timer()).isNull();
        assertThat(registry.find("relock.lock.force.unlocks").counter()).isNull();
        assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void argumentsAreChecked() {
        assertThatThrownBy(() -> new RelockMetrics(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("relock");
        assertThatThrownBy(() -> new RelockMetrics(relock, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxLockNames");
        assertThatThrownBy(() -> RelockMetrics.lockNameCap(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxLockNames");
        assertThatThrownBy(() -> metrics.bindTo(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("registry");
    }
}
