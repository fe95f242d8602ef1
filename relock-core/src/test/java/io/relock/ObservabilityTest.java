package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a client tells about itself: observer events and their order, {@link Relock#heldLocks()},
 * and the registry entry that lets {@link Relock#getLockInfo(String)} name a holder's host and
 * process.
 */
class ObservabilityTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    /** Every event as one line, in the order the observer saw them. */
    static final class Recorder implements LockObserver {

        final List<String> events = new ArrayList<>();
        final List<Object> all = new ArrayList<>();

        @Override
        public synchronized Object onAcquireStart(String lockName, String lockType, long ownerId) {
            events.add("start " + lockName + " " + lockType + " " + ownerId);
            return "context of " + lockName;
        }

        @Override
        public synchronized void onAcquireEnd(AcquireEvent event, Object context) {
            assertThat(context).isEqualTo("context of " + event.lockName());
            assertThat(event.waitNanos()).isNotNegative();
            events.add("end " + event.lockName() + " " + event.outcome() + " " + event.holdCount());
            all.add(event);
        }

        @Override
        public synchronized void onRelease(ReleaseEvent event) {
            assertThat(event.holdNanos()).isPositive();
            events.add("release " + event.lockName() + " " + event.lockType() + " " + event.outcome());
            all.add(event);
        }

        @Override
        public synchronized void onLockLost(LockLostEvent event) {
            events.add("lost " + event.lockName());
            all.add(event);
        }

        @Override
        public synchronized void onForceUnlock(ForceUnlockEvent event) {
            events.add("force " + event.lockName() + " " + event.lockType() + " " + event.removed());
            all.add(event);
        }

        @Override
        public synchronized void onWatchdogTick(WatchdogTickEvent event) {
            all.add(event);
        }

        synchronized List<String> events() {
            return List.copyOf(events);
        }

        synchronized boolean saw(Predicate<Object> event) {
            return all.stream().anyMatch(event);
        }

        synchronized <T> List<T> of(Class<T> type) {
            return all.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }

    @Test
    void anObserverSeesAcquiresReentriesAndTheLastReleaseInOrder() {
        Recorder recorder = new Recorder();
        Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).observer(recorder).build());
        try {
            long me = Thread.currentThread().getId();
            DistributedLock lock = relock.getLock("order:1");
            lock.lock();
            lock.lock();
            lock.unlock();
            lock.unlock();
            assertThat(recorder.events()).containsExactly(
                    "start order:1 reentrant " + me, "end order:1 ACQUIRED 1",
                    "start order:1 reentrant " + me, "end order:1 ACQUIRED 2",
                    "release order:1 reentrant RELEASED");
            ReleaseEvent release = recorder.of(ReleaseEvent.class).get(0);
            assertThat(release.ownerId()).isEqualTo(me);
        } finally {
            relock.close();
        }
    }

    @Test
    void eachLockTypeReportsItsOwnType() {
        Relock relock = clients.create();
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        List<DistributedLock> locks = List.of(relock.getLock("t"), relock.getFairLock("f"), relock.getFencedLock("k"),
                relock.getSpinLock("s"), relock.getSimpleLock("p"), relock.getReadWriteLock("rw").readLock());
        for (DistributedLock lock : locks) {
            lock.lock();
            lock.unlock();
        }
        DistributedLock write = relock.getReadWriteLock("rw").writeLock();
        write.lock();
        write.unlock();
        assertThat(recorder.of(ReleaseEvent.class)).extracting(ReleaseEvent::lockType)
                .containsExactly("reentrant", "fair", "fenced", "spin", "simple", "read", "write");
    }

    @Test
    void aWaitThatRunsOutIsATimeoutAndHoldsNothing() throws Exception {
        Relock holder = clients.create();
        Relock waiter = clients.create();
        Recorder recorder = new Recorder();
        waiter.addObserver(recorder);
        holder.getLock("busy").lock();
        DistributedLock lock = waiter.getLock("busy");
        assertThat(lock.tryLock()).isFalse();
        assertThat(lock.tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(recorder.events()).filteredOn(event -> event.startsWith("end"))
                .containsExactly("end busy TIMEOUT 0", "end busy TIMEOUT 0");
        List<AcquireEvent> ends = recorder.of(AcquireEvent.class);
        assertThat(ends.get(1).waitNanos()).as("waited its 50 ms").isGreaterThanOrEqualTo(
                TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(waiter.heldLocks()).isEmpty();
    }

    @Test
    void anInterruptedWaitIsReportedAsInterrupted() throws Exception {
        Relock holder = clients.create();
        Relock waiter = clients.create();
        Recorder recorder = new Recorder();
        waiter.addObserver(recorder);
        holder.getLock("interrupted").lock();
        CompletableFuture<Thread> waiting = new CompletableFuture<>();
        CompletableFuture<Void> outcome = Threads.run(() -> {
            waiting.complete(Thread.currentThread());
            waiter.getLock("interrupted").lockInterruptibly();
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter subscribed", () -> subscribers("interrupted") == 1);
        waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS).interrupt();
        assertThatThrownBy(() -> outcome.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InterruptedException.class);
        assertThat(recorder.events()).filteredOn(event -> event.startsWith("end"))
                .containsExactly("end interrupted INTERRUPTED 0");
    }

    @Test
    void aWaitEndedByClosingTheClientIsAnError() throws Exception {
        Relock holder = clients.create();
        Relock waiter = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        Recorder recorder = new Recorder();
        waiter.addObserver(recorder);
        holder.getLock("closing").lock();
        CompletableFuture<Void> outcome = Threads.run(() -> {
            waiter.getLock("closing").lock();
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter subscribed", () -> subscribers("closing") == 1);
        waiter.close();
        assertThatThrownBy(() -> outcome.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(IllegalStateException.class);
        AcquireEvent end = recorder.of(AcquireEvent.class).get(0);
        assertThat(end.outcome()).isEqualTo(AcquireEvent.Outcome.ERROR);
        assertThat(end.error()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aLostLeaseIsReportedWhenNoticedAndAgainAsTheOutcomeOfTheUnlock() {
        Relock relock = clients.create(Clients.SHORT_WATCHDOG);
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        DistributedLock lock = relock.getLock("lost");
        lock.lock();
        server.command("DEL", "lost");
        Eventually.await(PROMPTLY, "the watchdog noticed", () -> recorder.saw(LockLostEvent.class::isInstance));
        assertThat(relock.heldLocks()).as("a lost hold is not held").isEmpty();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(recorder.events()).containsSubsequence("end lost ACQUIRED 1", "lost lost",
                "release lost reentrant LOST");
        Eventually.await(PROMPTLY, "the tick that found it gone reported it", () -> recorder.saw(event ->
                event instanceof WatchdogTickEvent tick && tick.lost() == 1));
    }

    @Test
    void watchdogTicksReportRenewalsAndTheirLag() {
        Relock relock = clients.create(Clients.SHORT_WATCHDOG);
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        DistributedLock lock = relock.getLock("renewed");
        lock.lock();
        Eventually.await(PROMPTLY, "a tick renewed the lock", () -> recorder.saw(event ->
                event instanceof WatchdogTickEvent tick && tick.renewed() == 1));
        assertThat(recorder.of(WatchdogTickEvent.class)).allSatisfy(tick -> {
            assertThat(tick.lagNanos()).isNotNegative();
            assertThat(tick.failed()).isZero();
            assertThat(tick.lost()).isZero();
        });
        lock.unlock();
    }

    @Test
    void forceUnlockIsReportedWithWhetherItRemovedSomething() {
        Relock relock = clients.create();
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        Relock other = clients.create();
        other.getFairLock("forced").lock();
        assertThat(relock.getFairLock("forced").forceUnlock()).isTrue();
        assertThat(relock.getFairLock("forced").forceUnlock()).isFalse();
        assertThat(recorder.events()).containsExactly("force forced fair true", "force forced fair false");
    }

    @Test
    void aFailingObserverAffectsNeitherTheLockNorOtherObservers() {
        Relock relock = clients.create();
        relock.addObserver(new LockObserver() {
            @Override
            public Object onAcquireStart(String lockName, String lockType, long ownerId) {
                throw new IllegalStateException("observer bug");
            }

            @Override
            public void onRelease(ReleaseEvent event) {
                throw new IllegalStateException("observer bug");
            }
        });
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        DistributedLock lock = relock.getLock("robust");
        lock.lock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
        assertThat(recorder.events()).hasSize(3);
    }

    @Test
    void anAcquireEndsAtTheObserversItStartedWithEvenIfTheyChangeMeanwhile() throws Exception {
        Relock holder = clients.create();
        Relock waiter = clients.create();
        Recorder before = new Recorder();
        Recorder after = new Recorder();
        waiter.addObserver(before);
        DistributedLock held = holder.getLock("changing");
        held.lock();
        CompletableFuture<Boolean> outcome = Threads.call(() ->
                waiter.getLock("changing").tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS));
        Eventually.await(PROMPTLY, "the waiter subscribed", () -> subscribers("changing") == 1);
        waiter.removeObserver(before);
        waiter.addObserver(after);
        held.unlock();
        assertThat(outcome.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(before.events()).as("the one removed still ends what it started")
                .containsExactly("start changing reentrant " + before.of(AcquireEvent.class).get(0).ownerId(),
                        "end changing ACQUIRED 1");
        assertThat(after.events()).as("the one added sees no end without its start").isEmpty();
    }

    @Test
    void observersCanBeAddedAndRemovedAndAreChecked() {
        Relock relock = clients.create();
        Recorder recorder = new Recorder();
        relock.addObserver(recorder);
        assertThatThrownBy(() -> relock.addObserver(recorder)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("observer");
        assertThatThrownBy(() -> relock.addObserver(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("observer");
        assertThatThrownBy(() -> RelockConfig.builder().observer(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("observer");
        assertThatThrownBy(() -> RelockConfig.builder().observer(recorder).observer(recorder))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("observer");
        assertThat(relock.removeObserver(recorder)).isTrue();
        assertThat(relock.removeObserver(recorder)).isFalse();
        DistributedLock lock = relock.getLock("unobserved");
        lock.lock();
        lock.unlock();
        assertThat(recorder.events()).isEmpty();
    }

    @Test
    void heldLocksListsWhatThisClientHoldsWithOwnerCountAndLease() throws Exception {
        Relock relock = clients.create();
        Instant before = Instant.now().minusSeconds(1);
        DistributedLock reentrant = relock.getLock("held:a");
        reentrant.lock();
        reentrant.lock();
        long owner = Relock.newOwnerId();
        FencedLock fenced = relock.getFencedLock("held:b");
        fenced.lockAsync(60, TimeUnit.SECONDS, owner).toCompletableFuture().get(PROMPTLY.toMillis(),
                TimeUnit.MILLISECONDS);
        assertThat(clients.create().heldLocks()).as("another client holds nothing").isEmpty();

        List<HeldLock> held = relock.heldLocks();
        assertThat(held).extracting(HeldLock::name).containsExactly("held:a", "held:b");
        HeldLock first = held.get(0);
        assertThat(first.type()).isEqualTo("reentrant");
        assertThat(first.ownerId()).isEqualTo(Thread.currentThread().getId());
        assertThat(first.ownerThreadName()).isEqualTo(Thread.currentThread().getName());
        assertThat(first.holdCount()).isEqualTo(2);
        assertThat(first.watchdog()).isTrue();
        assertThat(first.heldSince()).isAfter(before).isBeforeOrEqualTo(Instant.now());
        assertThat(first.leaseLeftMillis()).isPositive().isLessThanOrEqualTo(Clients.STEADY_WATCHDOG.toMillis());
        HeldLock second = held.get(1);
        assertThat(second.type()).isEqualTo("fenced");
        assertThat(second.ownerId()).isEqualTo(owner);
        assertThat(second.ownerThreadName()).as("an async owner is no thread").isNull();
        assertThat(second.watchdog()).isFalse();
        assertThat(second.leaseLeftMillis()).isPositive().isLessThanOrEqualTo(60_000);

        reentrant.unlock();
        assertThat(relock.heldLocks()).extracting(HeldLock::holdCount).containsExactly(1, 1);
        reentrant.unlock();
        fenced.unlockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(relock.heldLocks()).isEmpty();
    }

    @Test
    void aFixedLeaseThatRanOutIsNoLongerListed() throws Exception {
        Relock relock = clients.create();
        DistributedLock lock = relock.getLock("short");
        lock.lock(300, TimeUnit.MILLISECONDS);
        assertThat(relock.heldLocks()).extracting(HeldLock::name).containsExactly("short");
        Eventually.await(PROMPTLY, "Redis expired the lease", () -> !lock.isLocked());
        assertThat(relock.heldLocks()).isEmpty();
    }

    @Test
    void lockInfoNamesTheHostAndProcessOfHoldersInOtherProcesses() throws Exception {
        try (ChildJvm first = ChildJvm.start(LockHolderMain.class, server.uri(), "report", "30000", "read");
                ChildJvm second = ChildJvm.start(LockHolderMain.class, server.uri(), "report", "30000", "read")) {
            String firstClient = first.awaitLine("LOCKED", LockContractTest.CHILD_START)
                    .substring("LOCKED ".length()).trim();
            String secondClient = second.awaitLine("LOCKED", PROMPTLY).substring("LOCKED ".length()).trim();
            Relock inspector = clients.create();

            LockInfo info = inspector.getLockInfo("report");
            assertThat(info.holders()).hasSize(2);
            assertThat(info.clients()).containsOnlyKeys(firstClient, secondClient);
            ClientInfo one = info.clients().get(firstClient);
            ClientInfo two = info.clients().get(secondClient);
            assertThat(one.pid()).isEqualTo(first.pid());
            assertThat(two.pid()).isEqualTo(second.pid());
            assertThat(one.host()).isEqualTo(inspector.clientInfo().host()).isNotBlank();
            assertThat(one.version()).isEqualTo(inspector.clientInfo().version());
            assertThat(one.startedAt()).isBefore(Instant.now().plusSeconds(1));
            for (String holder : info.holders().keySet()) {
                assertThat(info.clientOf(holder)).isPresent();
            }

            second.send("release");
            second.awaitLine("RELEASED", PROMPTLY);
            second.awaitExit(PROMPTLY);
            assertThat(registryKeys()).as("a closed client removes its entry")
                    .contains("relock:client:" + firstClient).doesNotContain("relock:client:" + secondClient);
            assertThat(inspector.getLockInfo("report").clients()).containsOnlyKeys(firstClient);
        }
    }

    @Test
    void theRegistryEntryOfAKilledProcessExpiresAndALiveOneIsKeptAlive() throws Exception {
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "crash",
                Long.toString(Clients.SHORT_WATCHDOG.toMillis()))) {
            String clientId = child.awaitLine("LOCKED", LockContractTest.CHILD_START)
                    .substring("LOCKED ".length()).trim();
            String key = "relock:client:" + clientId;
            long lease = Clients.SHORT_WATCHDOG.toMillis();
            assertThat((Long) server.command("PTTL", key)).isPositive().isLessThanOrEqualTo(lease);
            // Down by 100 ms first, so that only a refresh can bring it back up.
            Eventually.await(PROMPTLY, "time passed", () -> (Long) server.command("PTTL", key) < lease - 100);
            Eventually.await(PROMPTLY, "a watchdog tick extended the entry",
                    () -> (Long) server.command("PTTL", key) > lease - 50);
            child.kill();
            Eventually.await(PROMPTLY, "the entry expired", () -> !registryKeys().contains(key));
        }
    }

    @Test
    void theRegistryEntryLivesUnderTheKeyPrefixAndComesBackAfterItWasLost() {
        Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).keyPrefix("app:")
                .watchdogTimeout(Clients.SHORT_WATCHDOG).build());
        try {
            String key = "app:relock:client:" + relock.clientId();
            assertThat(registryKeys()).containsExactly(key);
            server.command("DEL", key);
            Eventually.await(PROMPTLY, "the next tick wrote it again", () -> registryKeys().contains(key));
            assertThat(server.command("HGET", key, "pid")).isEqualTo(Long.toString(ProcessHandle.current().pid()));
        } finally {
            relock.close();
        }
        assertThat(registryKeys()).isEmpty();
    }

    private List<String> registryKeys() {
        return ((List<?>) server.command("KEYS", "*relock:client:*")).stream().map(String::valueOf).toList();
    }

    private long subscribers(String lockName) {
        List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{" + lockName + "}");
        return (Long) reply.get(1);
    }
}
