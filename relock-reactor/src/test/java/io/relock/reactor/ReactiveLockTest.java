package io.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.DistributedLock;
import io.relock.LockInfo;
import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The reactive face on a real Redis. Every pipeline is subscribed to on Reactor's parallel
 * scheduler, whose threads BlockHound watches ({@link NoBlocking}): a blocking call anywhere on
 * the face's path fails the test. Blocking inspection ({@code getLockInfo}) runs on the test's
 * thread or on the bounded-elastic scheduler.
 */
@ExtendWith(NoBlocking.class)
class ReactiveLockTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    private RedisServer server;
    private final List<Relock> clients = new ArrayList<>();
    private Relock relock;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        this.relock = client(Duration.ofSeconds(30));
    }

    @AfterEach
    void close() {
        clients.forEach(Relock::close);
    }

    private Relock client(Duration watchdog) {
        Relock client = Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
                .watchdogTimeout(watchdog)
                .commandTimeout(Duration.ofSeconds(1))
                .build());
        clients.add(client);
        return client;
    }

    private ReactiveLock face(String name) {
        return ReactiveLock.of(relock.getLock(name));
    }

    /** Subscribes on a parallel thread, which BlockHound guards. */
    private static <T> Mono<T> onParallel(Mono<T> pipeline) {
        return pipeline.subscribeOn(Schedulers.parallel());
    }

    /** The hold count of {@code owner} of {@code client} on {@code name}, read on a thread that may block. */
    private static Mono<Long> holdCount(Relock client, String name, long owner) {
        return Mono.fromCallable(() -> client.getLockInfo(name).holders()
                        .getOrDefault(client.clientId() + ":" + owner, 0L))
                .subscribeOn(Schedulers.boundedElastic());
    }

    private void awaitLocked(String name) {
        Eventually.await(PROMPTLY, "'" + name + "' locked", () -> relock.getLockInfo(name).isLocked());
    }

    private void assertFree(String name) {
        LockInfo info = relock.getLockInfo(name);
        assertThat(info.holders()).as("holders of '%s'", name).isEmpty();
    }

    @Test
    void manyPipelinesOverSeveralClientsNeverOverlapNorLoseAnUpdate() {
        int clientCount = 4;
        int pipelinesPerClient = 50;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        AtomicInteger counter = new AtomicInteger();
        List<Mono<Integer>> pipelines = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            ReactiveLock lock = ReactiveLock.of(client(Duration.ofSeconds(30)).getLock("contended"));
            for (int p = 0; p < pipelinesPerClient; p++) {
                pipelines.add(onParallel(lock.withLock(Mono.defer(() -> {
                    mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    int seen = counter.get();
                    // Deliberately not atomic, and across a thread hop: overlapping holders lose updates.
                    return Mono.delay(Duration.ofMillis(1)).map(tick -> {
                        counter.set(seen + 1);
                        inside.decrementAndGet();
                        return seen + 1;
                    });
                }))));
            }
        }

        StepVerifier.create(Flux.merge(pipelines).count())
                .expectNext((long) clientCount * pipelinesPerClient)
                .expectComplete()
                .verify(Duration.ofSeconds(60));

        assertThat(mostInside.get()).as("most holders inside at once").isEqualTo(1);
        assertThat(counter.get()).as("updates, none lost").isEqualTo(clientCount * pipelinesPerClient);
        assertFree("contended");
    }

    @Test
    void aNestedWithLockInThePipelineReentersOnAnotherThread() {
        ReactiveLock outer = face("nested");
        ReactiveLock inner = face("nested");
        AtomicReference<String> innerThread = new AtomicReference<>();
        AtomicReference<Long> owner = new AtomicReference<>();

        Mono<Long> nested = outer.withLock(Mono.deferContextual(context -> {
            owner.set(ReactiveLock.ownerIn(context).orElseThrow());
            return Mono.just(1)
                    .publishOn(Schedulers.parallel())
                    .flatMap(one -> {
                        innerThread.set(Thread.currentThread().getName());
                        return inner.withLock(Mono.deferContextual(innerContext -> {
                            assertThat(ReactiveLock.ownerIn(innerContext)).hasValue(owner.get());
                            return holdCount(relock, "nested", owner.get());
                        }));
                    });
        }));

        StepVerifier.create(onParallel(nested))
                .expectNext(2L)
                .expectComplete()
                .verify(PROMPTLY);
        assertThat(innerThread.get()).as("the thread that subscribed to the inner withLock").startsWith("parallel");
        assertThat(owner.get()).as("an owner from Relock.newOwnerId()").isNegative();
        assertThat(holdCount(relock, "nested", owner.get()).block(PROMPTLY)).isZero();
        assertFree("nested");
    }

    @Test
    void anOwnerWrittenIntoTheContextIsUsed() {
        long owner = Relock.newOwnerId();
        Mono<Long> counted = face("given").withLock(holdCount(relock, "given", owner))
                .contextWrite(ReactiveLock.ownedBy(owner));

        StepVerifier.create(onParallel(counted)).expectNext(1L).expectComplete().verify(PROMPTLY);
        assertThat(ReactiveLock.ownerIn(reactor.util.context.Context.empty())).isEqualTo(OptionalLong.empty());
    }

    @Test
    void differentSubscriptionsAreDifferentOwners() {
        ReactiveLock lock = face("two-subscriptions");
        Sinks.Empty<Void> gate = Sinks.empty();
        Mono<Void> first = lock.withLock(gate.asMono());
        Disposable holder = onParallel(first).subscribe();
        awaitLocked("two-subscriptions");
        AtomicBoolean secondRan = new AtomicBoolean();

        StepVerifier.create(onParallel(lock.tryWithLock(Duration.ofMillis(200),
                        Mono.fromRunnable(() -> secondRan.set(true)))))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("two-subscriptions")
                        .hasMessageContaining("200 ms"))
                .verify(PROMPTLY);
        assertThat(secondRan).isFalse();

        gate.tryEmitEmpty();
        Eventually.await(PROMPTLY, "the first pipeline done", holder::isDisposed);
        StepVerifier.create(onParallel(lock.tryWithLock(Duration.ZERO, Mono.just("second"))))
                .expectNext("second").expectComplete().verify(PROMPTLY);
        assertFree("two-subscriptions");
    }

    @Test
    void theLockIsReleasedBeforeAMonoSignalsAndWhenItErrors() {
        ReactiveLock lock = face("mono");
        StepVerifier.create(onParallel(lock.withLock(Mono.delay(Duration.ofMillis(1)).thenReturn("done"))))
                .expectNext("done").expectComplete().verify(PROMPTLY);
        assertFree("mono");

        StepVerifier.create(onParallel(lock.withLock(Mono.delay(Duration.ofMillis(1))
                        .then(Mono.error(new IllegalStateException("boom"))))))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(IllegalStateException.class)
                        .hasMessage("boom").hasNoSuppressedExceptions())
                .verify(PROMPTLY);
        assertFree("mono");

        StepVerifier.create(onParallel(lock.withLock(Mono.empty()))).expectComplete().verify(PROMPTLY);
        assertFree("mono");
    }

    @Test
    void aFluxPassesItsValuesOnHoldingAndReleasesAtTheEnd() {
        ReactiveLock lock = face("flux");
        StepVerifier.create(lock.withLock(Flux.range(1, 3).delayElements(Duration.ofMillis(1)))
                        .subscribeOn(Schedulers.parallel()))
                .expectNext(1, 2, 3).expectComplete().verify(PROMPTLY);
        assertFree("flux");

        StepVerifier.create(lock.withLock(Flux.concat(Flux.just(1), Flux.error(new IllegalStateException("boom"))))
                        .subscribeOn(Schedulers.parallel()))
                .expectNext(1).expectError(IllegalStateException.class).verify(PROMPTLY);
        assertFree("flux");
    }

    @Test
    void disposingWhileHoldingCancelsTheWorkAndReleases() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Disposable pipeline = onParallel(face("disposed").withLock(Mono.never().doOnCancel(() -> cancelled.set(true))))
                .subscribe();
        awaitLocked("disposed");

        pipeline.dispose();

        Eventually.await(PROMPTLY, "'disposed' released", () -> !relock.getLockInfo("disposed").isLocked());
        assertThat(cancelled).isTrue();
    }

    @Test
    void disposingWhileWaitingLeavesTheQueueAndHoldsNothing() throws Exception {
        DistributedLock rival = client(Duration.ofSeconds(30)).getLock("waited");
        rival.lock();
        AtomicBoolean ran = new AtomicBoolean();
        Disposable waiter = onParallel(face("waited").withLock(Mono.fromRunnable(() -> ran.set(true)))).subscribe();
        Eventually.await(PROMPTLY, "a waiter on 'waited'", () -> relock.getLockInfo("waited").waitingClients() > 0);

        waiter.dispose();

        Eventually.await(PROMPTLY, "no waiter left", () -> relock.getLockInfo("waited").waitingClients() == 0);
        rival.unlock();
        DistributedLock third = client(Duration.ofSeconds(30)).getLock("waited");
        assertThat(third.tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the lock is free for others")
                .isTrue();
        assertThat(relock.getLockInfo("waited").holders()).hasSize(1);
        third.unlock();
        assertThat(ran).as("the cancelled work never ran").isFalse();
        assertFree("waited");
    }

    @Test
    void disposalsRacingTheGrantLeaveNothingHeld() {
        DistributedLock rival = client(Duration.ofSeconds(30)).getLock("raced");
        for (int round = 0; round < 30; round++) {
            rival.lock();
            Disposable waiter = onParallel(face("raced").withLock(Mono.never())).subscribe();
            Eventually.await(PROMPTLY, "a waiter on 'raced'", () -> relock.getLockInfo("raced").waitingClients() > 0);
            rival.unlock();
            waiter.dispose();
            Eventually.await(PROMPTLY, "'raced' free after round " + round,
                    () -> !relock.getLockInfo("raced").isLocked());
        }
        assertThat(rival.tryLock()).as("the lock is free for others").isTrue();
        rival.unlock();
    }

    @Test
    void aLostHoldCancelsTheWorkAndErrorsWithLockLostException() {
        Relock shortLeased = client(Duration.ofMillis(1500));
        ReactiveLock lock = ReactiveLock.of(shortLeased.getLock("lost"));
        AtomicBoolean cancelled = new AtomicBoolean();
        StepVerifier.create(onParallel(lock.withLock(Mono.never().doOnCancel(() -> cancelled.set(true)))))
                .expectSubscription()
                .then(() -> {
                    awaitLocked("lost");
                    assertThat(relock.getLock("lost").forceUnlock()).isTrue();
                })
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("lost")
                        .hasNoSuppressedExceptions())
                .verify(PROMPTLY);
        assertThat(cancelled).as("the work was cancelled").isTrue();
        assertFree("lost");
    }

    @Test
    void aLeaseThatRunsOutUnderTheWorkCancelsIt() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Mono<Long> outlasting = Mono.delay(Duration.ofSeconds(30)).doOnCancel(() -> cancelled.set(true));
        StepVerifier.create(onParallel(face("leased").withLock(Duration.ofMillis(100), outlasting)))
                .expectError(LockLostException.class)
                .verify(PROMPTLY);
        assertThat(cancelled).as("the work was cancelled when the lease ran out").isTrue();
        assertFree("leased");
    }

    @Test
    void aHoldWhoseLeaseRanOutUnwatchedSaysSoAtTheRelease() {
        Mono<Void> late = face("unwatched").acquire(Duration.ofMillis(100))
                .delayUntil(hold -> Mono.delay(Duration.ofMillis(400)))
                .flatMap(ReactiveHold::release);
        StepVerifier.create(onParallel(late))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("unwatched"))
                .verify(PROMPTLY);
        assertFree("unwatched");
    }

    @Test
    void acquireAndReleaseForUsingWhenAndReleaseIsIdempotent() {
        ReactiveLock lock = face("holds");
        long owner = Relock.newOwnerId();
        Mono<Long> twice = lock.acquire().zipWith(lock.acquire())
                .flatMap(holds -> {
                    assertThat(holds.getT1().owner()).isEqualTo(owner);
                    assertThat(holds.getT1().name()).isEqualTo("holds");
                    return holdCount(relock, "holds", owner)
                            .flatMap(two -> holds.getT1().release()
                                    .then(holds.getT1().release())
                                    .then(holdCount(relock, "holds", owner))
                                    .map(one -> two * 10 + one))
                            .flatMap(counts -> holds.getT2().release().thenReturn(counts));
                })
                .contextWrite(ReactiveLock.ownedBy(owner));

        StepVerifier.create(onParallel(twice)).expectNext(21L).expectComplete().verify(PROMPTLY);
        assertFree("holds");

        Mono<String> used = Mono.usingWhen(lock.acquire(), hold -> Mono.just("used " + hold.name()),
                ReactiveHold::release);
        StepVerifier.create(onParallel(used)).expectNext("used holds").expectComplete().verify(PROMPTLY);
        assertFree("holds");
    }

    @Test
    void aFencedLocksHoldCarriesATokenThatGrowsWithEveryNewHolder() {
        ReactiveLock fenced = ReactiveLock.of(relock.getFencedLock("fenced"));
        ReactiveLock rival = ReactiveLock.of(client(Duration.ofSeconds(30)).getFencedLock("fenced"));
        Mono<Long> token = Mono.usingWhen(fenced.acquire(), hold -> Mono.just(hold.token().getAsLong()),
                ReactiveHold::release);
        long first = token.block(PROMPTLY);
        Mono<Long> next = Mono.usingWhen(rival.tryAcquire(Duration.ofSeconds(5)),
                hold -> Mono.just(hold.token().getAsLong()), ReactiveHold::release);

        StepVerifier.create(onParallel(next)).assertNext(second -> assertThat(second).isGreaterThan(first))
                .expectComplete().verify(PROMPTLY);
        StepVerifier.create(onParallel(face("plain").acquire().flatMap(hold -> hold.release()
                .thenReturn(hold.token().isPresent())))).expectNext(false).expectComplete().verify(PROMPTLY);
        assertFree("fenced");
    }

    @Test
    void tryAcquireIsEmptyWhenTheWaitRunsOut() {
        DistributedLock rival = client(Duration.ofSeconds(30)).getLock("try");
        rival.lock();
        StepVerifier.create(onParallel(face("try").tryAcquire(Duration.ofMillis(100))))
                .expectComplete().verify(PROMPTLY);
        rival.unlock();
        StepVerifier.create(onParallel(face("try").tryAcquire(Duration.ofMillis(100)).flatMap(ReactiveHold::release)))
                .expectComplete().verify(PROMPTLY);
        assertFree("try");
    }

    @Test
    void badArgumentsAreRejectedWhenCalled() {
        ReactiveLock lock = face("bad");
        assertThatThrownBy(() -> ReactiveLock.of(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lock");
        assertThatThrownBy(() -> lock.withLock((Mono<?>) null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("work");
        assertThatThrownBy(() -> lock.tryWithLock(null, Mono.empty())).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("wait");
        assertThatThrownBy(() -> lock.withLock(Duration.ZERO, Flux.empty()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows");
        assertThat(lock.name()).isEqualTo("bad");
        assertThat(lock.lock().getName()).isEqualTo("bad");
    }
}
