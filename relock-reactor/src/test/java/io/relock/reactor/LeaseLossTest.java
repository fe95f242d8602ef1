package io.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * A lost hold stops the work in every form of the reactive face: the work's subscription is
 * cancelled (its {@code doOnCancel} runs, and a value the source still tries to emit is refused
 * because nobody is subscribed any more), the subscriber gets {@link LockLostException}, and the
 * hold is released exactly once. Watchdog-renewed forms lose their hold to a force-unlock from
 * another client; fixed-lease forms to the end of their lease. The work is a sink the test
 * drives, so that "nothing after the loss" is asked, not waited for.
 */
@ExtendWith(NoBlocking.class)
class LeaseLossTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    /** A fixed lease short enough for a test, long enough (with a margin for a loaded machine) that the work is running when it ends. */
    private static final Duration SHORT_LEASE = Duration.ofSeconds(1);

    private RedisServer server;
    private final List<Relock> clients = new ArrayList<>();
    /** The holder: renewals every 500 ms, so that a force-unlock is noticed soon. */
    private Relock holder;
    /** Another client, which force-unlocks. */
    private Relock other;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        holder = client(Duration.ofMillis(1500));
        other = client(Duration.ofSeconds(30));
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

    /** How the loss comes: a force-unlock by the other client, or the end of a fixed lease. */
    enum Loss { FORCE_UNLOCK, LEASE_RUNS_OUT }

    /** Every form that takes a {@code Flux}, with how its hold is lost. */
    static Stream<Arguments> fluxForms() {
        return Stream.of(
                form("withLock(Flux)", Loss.FORCE_UNLOCK, (lock, work) -> lock.withLock(work)),
                form("tryWithLock(wait, Flux)", Loss.FORCE_UNLOCK,
                        (lock, work) -> lock.tryWithLock(Duration.ofSeconds(1), work)),
                form("withLock(lease, Flux)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> lock.withLock(SHORT_LEASE, work)),
                form("tryWithLock(wait, lease, Flux)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> lock.tryWithLock(Duration.ZERO, SHORT_LEASE, work)),
                form("acquire() + whileHeld(Flux)", Loss.FORCE_UNLOCK,
                        (lock, work) -> Flux.usingWhen(lock.acquire(), hold -> hold.whileHeld(work),
                                ReactiveHold::release)),
                form("tryAcquire(wait, lease) + whileHeld(Flux)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> Flux.usingWhen(lock.tryAcquire(Duration.ZERO, SHORT_LEASE),
                                hold -> hold.whileHeld(work), ReactiveHold::release)));
    }

    /** Every form that takes a {@code Mono}; the work is the first value of the same kind of sink. */
    static Stream<Arguments> monoForms() {
        return Stream.of(
                form("withLock(Mono)", Loss.FORCE_UNLOCK, (lock, work) -> lock.withLock(work.next()).flux()),
                form("tryWithLock(wait, Mono)", Loss.FORCE_UNLOCK,
                        (lock, work) -> lock.tryWithLock(Duration.ofSeconds(1), work.next()).flux()),
                form("withLock(lease, Mono)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> lock.withLock(SHORT_LEASE, work.next()).flux()),
                form("tryWithLock(wait, lease, Mono)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> lock.tryWithLock(Duration.ZERO, SHORT_LEASE, work.next()).flux()),
                form("acquire(lease) + whileHeld(Mono)", Loss.LEASE_RUNS_OUT,
                        (lock, work) -> Mono.usingWhen(lock.acquire(SHORT_LEASE), hold -> hold.whileHeld(work.next()),
                                ReactiveHold::release).flux()),
                form("tryAcquire(wait) + whileHeld(Mono)", Loss.FORCE_UNLOCK,
                        (lock, work) -> Mono.usingWhen(lock.tryAcquire(Duration.ofSeconds(1)),
                                hold -> hold.whileHeld(work.next()), ReactiveHold::release).flux()));
    }

    private static Arguments form(String name, Loss loss,
            BiFunction<ReactiveLock, Flux<Integer>, Flux<Integer>> guard) {
        return Arguments.of(name, loss, guard);
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("fluxForms")
    void aLostHoldCancelsAFluxAndErrorsWithLockLostException(String form, Loss loss,
            BiFunction<ReactiveLock, Flux<Integer>, Flux<Integer>> guard) throws Exception {
        assertLossStopsTheWork("flux:" + form, loss, guard, true);
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("monoForms")
    void aLostHoldCancelsAMonoAndErrorsWithLockLostException(String form, Loss loss,
            BiFunction<ReactiveLock, Flux<Integer>, Flux<Integer>> guard) throws Exception {
        assertLossStopsTheWork("mono:" + form, loss, guard, false);
    }

    private void assertLossStopsTheWork(String name, Loss loss,
            BiFunction<ReactiveLock, Flux<Integer>, Flux<Integer>> guard, boolean emitsWhileHeld) throws Exception {
        AtomicInteger releases = new AtomicInteger();
        ReactiveLock lock = ReactiveLock.of(countingReleases(holder.getLock(name), releases));
        Work work = new Work();

        StepVerifier.Step<Integer> held = StepVerifier.create(guard.apply(lock, work.flux())
                        .subscribeOn(Schedulers.parallel()))
                .expectSubscription()
                .then(work::awaitSubscribed);
        if (emitsWhileHeld) {
            held = held.then(() -> work.emit(1)).expectNext(1);
        }
        held.then(() -> {
                    if (loss == Loss.FORCE_UNLOCK) {
                        assertThat(other.getLock(name).forceUnlock()).as("force-unlocked by the other client").isTrue();
                    }
                })
                .expectErrorSatisfies(error -> {
                    assertThat(error).isInstanceOf(LockLostException.class).hasMessageContaining(name);
                    assertThat(((LockLostException) error).lockName()).isEqualTo(name);
                    if (loss == Loss.LEASE_RUNS_OUT) {
                        assertThat(error).hasCauseInstanceOf(TimeoutException.class)
                                .hasMessageContaining("lease of " + SHORT_LEASE.toMillis() + " ms ran out");
                    }
                })
                .verify(PROMPTLY);

        assertThat(work.cancelled.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .as("the work's doOnCancel ran").isTrue();
        assertThat(work.sink.tryEmitNext(2)).as("the source can no longer emit after the loss")
                .isEqualTo(Sinks.EmitResult.FAIL_CANCELLED);
        assertThat(work.requestedAfterCancel).as("requests after the cancel").isFalse();
        assertThat(releases.get()).as("releases of the lost hold").isEqualTo(1);
        Eventually.await(PROMPTLY, "'" + name + "' free", () -> !other.getLockInfo(name).isLocked());
    }

    /**
     * The plain {@code takeUntilOther(hold.lost())} that {@link ReactiveHold#lost()} warns about:
     * kept as a test so that the warning stays true (if Reactor ever cancels the source on the
     * other's error, the warning and {@code whileHeld}'s detour can go).
     */
    @Test
    void takeUntilOtherAloneDoesNotCancelTheWorkOnALoss() throws Exception {
        Work work = new Work();
        Sinks.Empty<Void> loss = Sinks.empty();
        StepVerifier.create(work.flux().takeUntilOther(loss.asMono()))
                .expectSubscription()
                .then(work::awaitSubscribed)
                .then(() -> loss.tryEmitError(new LockLostException("reactor", 1, null)))
                .expectError(LockLostException.class)
                .verify(PROMPTLY);
        assertThat(work.cancelled.getCount()).as("doOnCancel not run").isEqualTo(1);
        assertThat(work.sink.tryEmitNext(2)).isEqualTo(Sinks.EmitResult.OK);
    }

    /** The work: a unicast sink the test emits into, watched for its subscription, requests and cancel. */
    private static final class Work {
        final Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer();
        final CountDownLatch subscribed = new CountDownLatch(1);
        final CountDownLatch cancelled = new CountDownLatch(1);
        volatile boolean requestedAfterCancel;

        Flux<Integer> flux() {
            return sink.asFlux()
                    .doOnSubscribe(subscription -> subscribed.countDown())
                    .doOnRequest(n -> {
                        if (cancelled.getCount() == 0) {
                            requestedAfterCancel = true;
                        }
                    })
                    .doOnCancel(cancelled::countDown);
        }

        void awaitSubscribed() {
            try {
                assertThat(subscribed.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                        .as("the work was subscribed to, holding the lock").isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        void emit(int value) {
            assertThat(sink.tryEmitNext(value)).isEqualTo(Sinks.EmitResult.OK);
        }
    }

    /** {@code lock}, counting the releases sent through it ({@code unlockAsync}). */
    private static DistributedLock countingReleases(DistributedLock lock, AtomicInteger releases) {
        return (DistributedLock) Proxy.newProxyInstance(LeaseLossTest.class.getClassLoader(),
                new Class<?>[] {DistributedLock.class}, (proxy, method, args) -> {
                    if (method.getName().equals("unlockAsync")) {
                        releases.incrementAndGet();
                    }
                    try {
                        return method.invoke(lock, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
