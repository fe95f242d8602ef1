package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.reactor.ReactiveLock;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * {@link WithLock} on methods that return a {@code Mono} or a {@code Flux}: each subscription
 * takes the lock, invokes the method holding it, and releases it when the publisher completes,
 * errors or is cancelled; the attributes mean what they mean on a blocking method, and every
 * failure arrives in the publisher.
 */
class WithLockReactiveTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    private RedisServer server;
    private Relock observer;

    @BeforeEach
    void connectObserver(RedisServer server) {
        this.server = server;
        this.observer = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void closeObserver() {
        observer.close();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withUserConfiguration(TestRelock.class)
                // A short watchdog lease: renewals every second, so that a force-unlock shows soon.
                .withPropertyValues("test.redis.uri=" + server.uri(), "relock.watchdog-timeout=3s")
                .withUserConfiguration(LedgerConfig.class);
    }

    /** Whether the observer sees {@code name} locked, asked off the pipeline's thread. */
    private Mono<Boolean> locked(String name) {
        return Mono.fromCallable(() -> observer.getLock(name).isLocked()).subscribeOn(Schedulers.boundedElastic());
    }

    @Test
    void aMonoIsHeldFromEachSubscriptionUntilItsValueAndTheMethodRunsPerSubscription() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            Mono<String> call = ledger.post("m1", locked("ledger:m1").map(held -> "held " + held));
            assertThat(ledger.runs()).as("nothing happens before the subscription").isZero();
            assertThat(observer.getLock("ledger:m1").isLocked()).isFalse();
            assertThat(call.block(PROMPTLY)).isEqualTo("held true");
            assertThat(observer.getLock("ledger:m1").isLocked()).as("released before the value came").isFalse();
            assertThat(call.block(PROMPTLY)).isEqualTo("held true");
            assertThat(ledger.runs()).isEqualTo(2);
        });
    }

    @Test
    void aFluxIsHeldWhileItEmitsAndReleasedWhenItCompletes() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            Sinks.Many<Integer> items = Sinks.many().unicast().onBackpressureBuffer();
            List<Integer> got = new CopyOnWriteArrayList<>();
            AtomicBoolean completed = new AtomicBoolean();
            ledger.stream("f1", items.asFlux()).subscribe(got::add, error -> { }, () -> completed.set(true));
            Eventually.await(PROMPTLY, "ledger:f1 taken", () -> observer.getLock("ledger:f1").isLocked());
            items.tryEmitNext(1);
            Eventually.await(PROMPTLY, "the first item passed", () -> got.equals(List.of(1)));
            assertThat(observer.getLock("ledger:f1").isLocked()).isTrue();
            items.tryEmitComplete();
            Eventually.await(PROMPTLY, "the flux completed", completed::get);
            assertThat(observer.getLock("ledger:f1").isLocked()).as("released before the completion").isFalse();
        });
    }

    @Test
    void cancellingASubscriptionReleases() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            assertThat(ledger.stream("f2", Flux.concat(Flux.just(1), Flux.never())).take(1).blockLast(PROMPTLY))
                    .isEqualTo(1);
            Eventually.await(PROMPTLY, "ledger:f2 released", () -> !observer.getLock("ledger:f2").isLocked());

            Disposable pending = ledger.post("m2", Mono.never()).subscribe();
            Eventually.await(PROMPTLY, "ledger:m2 taken", () -> observer.getLock("ledger:m2").isLocked());
            pending.dispose();
            Eventually.await(PROMPTLY, "ledger:m2 released", () -> !observer.getLock("ledger:m2").isLocked());
        });
    }

    @Test
    void anErrorReleasesAndReachesTheSubscriber() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            assertThatThrownBy(() -> ledger.post("m3", Mono.error(new IllegalStateException("ledger closed")))
                    .block(PROMPTLY)).isInstanceOf(IllegalStateException.class).hasMessage("ledger closed");
            assertThat(observer.getLock("ledger:m3").isLocked()).isFalse();
            assertThatThrownBy(() -> ledger.stream("f3", Flux.error(new IllegalStateException("ledger closed")))
                    .blockLast(PROMPTLY)).isInstanceOf(IllegalStateException.class);
            assertThat(observer.getLock("ledger:f3").isLocked()).isFalse();
        });
    }

    @Test
    void notAcquiredIsSpringsExceptionOrTheSkipOrTheFallbackAndTheMethodDoesNotRun() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            io.relock.DistributedLock taken = observer.getLock("ledger:m4");
            taken.lock();
            try {
                assertThatThrownBy(() -> ledger.post("m4", Mono.just("posted")).block(PROMPTLY))
                        .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("ledger:m4")
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime()).isEqualTo(Duration.ZERO));
                assertThatThrownBy(() -> ledger.stream("m4", Flux.just(1)).blockLast(PROMPTLY))
                        .isInstanceOf(LockNotAcquiredException.class);
                assertThat(ledger.postOrSkip("m4", Mono.just("posted")).block(PROMPTLY)).isNull();
                assertThat(ledger.postOrBusy("m4", Mono.just("posted")).block(PROMPTLY)).isEqualTo("busy [ledger:m4]");
                assertThat(ledger.runs()).isZero();
            } finally {
                taken.unlock();
            }
            assertThat(ledger.postOrBusy("m4", Mono.just("posted")).block(PROMPTLY)).isEqualTo("posted");
        });
    }

    @Test
    void aBadKeyIsAnErrorOfThePublisherNotOfTheCall() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            Mono<String> call = ledger.post(" ", Mono.just("posted"));
            assertThatThrownBy(() -> call.block(PROMPTLY)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is blank");
            assertThat(ledger.runs()).isZero();
        });
    }

    @Test
    void aLockLostWhileHeldStopsTheWorkWithSpringsLockLostException() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            AtomicBoolean cancelled = new AtomicBoolean();
            Mono<String> call = ledger.post("m5", Mono.<String>never().doOnCancel(() -> cancelled.set(true)));
            CopyOnWriteArrayList<Throwable> failures = new CopyOnWriteArrayList<>();
            call.subscribe(value -> { }, failures::add);
            Eventually.await(PROMPTLY, "ledger:m5 taken", () -> observer.getLock("ledger:m5").isLocked());
            assertThat(observer.forceUnlock("ledger:m5")).isTrue();
            Eventually.await(PROMPTLY, "the loss reached the subscriber", () -> !failures.isEmpty());
            assertThat(failures.get(0)).isInstanceOf(LockLostException.class)
                    .isInstanceOf(LockLostException.class).hasMessageContaining("'ledger:m5' was lost");
            assertThat(((LockLostException) failures.get(0)).lockNames()).containsExactly("ledger:m5");
            assertThat(cancelled).as("the method's publisher was cancelled").isTrue();
        });
    }

    @Test
    void aLockLostWhileAFluxRunsCancelsItAndNothingPassesAfterTheLoss() {
        runner().run(context -> assertLossStopsTheFlux(context.getBean(Ledger.class), "f5", false));
    }

    @Test
    void aFixedLeaseThatRunsOutUnderAFluxCancelsIt() {
        runner().run(context -> assertLossStopsTheFlux(context.getBean(Ledger.class), "f6", true));
    }

    /**
     * Runs a guarded {@code Flux} of a sink the test drives, loses its hold (a force-unlock by
     * another client, or its fixed lease's end) and checks that the method's publisher was
     * cancelled, refuses further values, and that the subscriber got the loss.
     */
    private void assertLossStopsTheFlux(Ledger ledger, String id, boolean leased) throws Exception {
        String name = "ledger:" + id;
        Sinks.Many<Integer> items = Sinks.many().unicast().onBackpressureBuffer();
        CountDownLatch subscribed = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        Flux<Integer> work = items.asFlux().doOnSubscribe(subscription -> subscribed.countDown())
                .doOnCancel(cancelled::countDown);
        List<Integer> got = new CopyOnWriteArrayList<>();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        (leased ? ledger.streamLeased(id, work) : ledger.stream(id, work))
                .subscribe(got::add, failure::complete, () -> failure.complete(null));
        assertThat(subscribed.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the method's flux subscribed")
                .isTrue();
        assertThat(items.tryEmitNext(1)).isEqualTo(Sinks.EmitResult.OK);
        Eventually.await(PROMPTLY, "the first item passed", () -> got.equals(List.of(1)));
        if (!leased) {
            assertThat(observer.forceUnlock(name)).isTrue();
        }

        Throwable lost = failure.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost).isInstanceOf(LockLostException.class).hasMessageContaining("'" + name + "' was lost");
        assertThat(((LockLostException) lost).lockNames()).containsExactly(name);
        assertThat(cancelled.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .as("the method's publisher was cancelled").isTrue();
        assertThat(items.tryEmitNext(2)).as("the source can no longer emit").isEqualTo(Sinks.EmitResult.FAIL_CANCELLED);
        assertThat(got).as("values passed on").containsExactly(1);
        assertThat(observer.getLock(name).isLocked()).isFalse();
    }

    @Test
    void aNestedCallInTheSamePipelineReEntersWhicheverThreadRunsIt() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            Outer outer = context.getBean(Outer.class);
            // The inner call has waitTime 0: only a re-entry lets it through while the outer holds.
            Mono<Long> holds = Mono.fromCallable(() -> observer.getLockInfo("ledger:m6").holders().values().stream()
                    .mapToLong(Long::longValue).sum()).subscribeOn(Schedulers.boundedElastic());
            assertThat(outer.twice("m6", holds).block(PROMPTLY)).isEqualTo(2L);
            assertThat(observer.getLock("ledger:m6").isLocked()).isFalse();
            assertThat(ledger.runs()).isEqualTo(1);
        });
    }

    @Test
    void aKeyNamingSeveralLocksHoldsThemAll() {
        runner().run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            Mono<Boolean> both = locked("ledger:a").zipWith(locked("ledger:b"), Boolean::logicalAnd);
            assertThat(ledger.postAll(List.of("b", "a"), both).block(PROMPTLY)).isTrue();
            assertThat(observer.getLock("ledger:a").isLocked()).isFalse();
            assertThat(observer.getLock("ledger:b").isLocked()).isFalse();
        });
    }

    @Test
    void withoutRelockReactorAReactiveMethodFailsTheStartSayingWhatToAdd() {
        runner().withClassLoader(new FilteredClassLoader(ReactiveLock.class)).run(context -> assertThat(context)
                .hasFailed().getFailure().hasStackTraceContaining("@WithLock on " + Ledger.class.getName())
                .hasStackTraceContaining(": holding the lock for the publisher's lifetime needs io.relock:relock-reactor"));
    }

    @Configuration(proxyBeanMethods = false)
    static class LedgerConfig {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Outer outer(Ledger ledger) {
            return new Outer(ledger);
        }
    }

    /** Methods that return the work the test hands them, under the lock {@code ledger:<id>}. */
    static class Ledger {

        private final AtomicInteger runs = new AtomicInteger();

        /** How many times a guarded method ran. */
        public int runs() {
            return runs.get();
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0")
        public Mono<String> post(String id, Mono<String> work) {
            runs.incrementAndGet();
            return work;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0")
        public <T> Mono<T> postAny(String id, Mono<T> work) {
            runs.incrementAndGet();
            return work;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0")
        public Flux<Integer> stream(String id, Flux<Integer> items) {
            runs.incrementAndGet();
            return items;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0", leaseTime = "1s")
        public Flux<Integer> streamLeased(String id, Flux<Integer> items) {
            runs.incrementAndGet();
            return items;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public Mono<String> postOrSkip(String id, Mono<String> work) {
            runs.incrementAndGet();
            return work;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0", fallback = "busy")
        public Mono<String> postOrBusy(String id, Mono<String> work) {
            return work;
        }

        public Mono<String> busy(String id, Mono<String> work, LockNotAcquiredException notAcquired) {
            return Mono.just("busy " + notAcquired.lockNames());
        }

        @WithLock(name = "ledger", key = "#ids", waitTime = "5s")
        public Mono<Boolean> postAll(List<String> ids, Mono<Boolean> work) {
            return work;
        }
    }

    /** Calls the ledger from inside its own hold of the same lock. */
    static class Outer {

        private final Ledger ledger;

        Outer(Ledger ledger) {
            this.ledger = ledger;
        }

        @WithLock(name = "ledger", key = "#id", waitTime = "0")
        public Mono<Long> twice(String id, Mono<Long> inside) {
            return Mono.just(id).publishOn(Schedulers.parallel()).flatMap(same -> ledger.postAny(same, inside));
        }
    }
}
