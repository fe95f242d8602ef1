package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.testkit.Eventually;
import io.relock.testkit.ChildJvm;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/** {@link WithLock} in a real Spring context, against a real redis-server. */
class WithLockTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    /**
     * How long a child JVM may take to start and lock: setup, not what the test measures. Its
     * classpath is Spring Boot's whole test classpath, and on a loaded 2-core machine (a second
     * build beside this one) the start took more than 10 s once.
     */
    private static final Duration CHILD_START = Duration.ofSeconds(60);

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

    private ApplicationContextRunner runner(Class<?> services, String... properties) {
        return new ApplicationContextRunner()
                .withUserConfiguration(TestRelock.class)
                .withPropertyValues("test.redis.uri=" + server.uri(), "test.wait=300ms")
                .withPropertyValues(properties)
                .withUserConfiguration(services);
    }

    @Test
    void theMethodRunsWhileItsLockIsHeldAndTheLockIsFreeAfterwards() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            state.observer = observer;
            assertThat(guarded.charge("o1")).isEqualTo(List.of("bill:o1"));
            assertThat(state.lockedInside).isTrue();
            assertThat(observer.getLock("bill:o1").isLocked()).isFalse();
        });
    }

    @Test
    void aLockHeldByAnotherProcessMakesTheCallThrowWithinTheWaitTimeWithoutRunningIt() {
        try (ChildJvm holder = ChildJvm.start(HolderMain.class, server.uri(), "bill:o2")) {
            holder.awaitLine("LOCKED", CHILD_START);
            runner(GuardedConfig.class).run(context -> {
                Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
                state.observer = observer;
                long start = System.nanoTime();
                assertThatThrownBy(() -> guarded.charge("o2")).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("bill:o2")
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).waitTime())
                                .isEqualTo(Duration.ofMillis(300)));
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(300)
                        .isLessThan(PROMPTLY.toMillis());
                assertThat(state.runs).hasValue(0);
            });
            holder.send("release");
            holder.awaitLine("RELEASED", PROMPTLY);
        }
    }

    @Test
    void skipReturnsNothingAndFallbackAnswersInsteadWhenTheLockIsTaken() throws Exception {
        DistributedLock job = observer.getLock("nightly");
        DistributedLock quote = observer.getLock("quote:q1");
        job.lock();
        quote.lock();
        try {
            runner(GuardedConfig.class).run(context -> {
                Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
                guarded.nightly();
                assertThat(guarded.report()).isEmpty();
                assertThat(guarded.quote("q1")).isEqualTo("cached q1 (quote:q1 busy)");
                assertThat(state.runs).hasValue(0);
            });
        } finally {
            job.unlock();
            quote.unlock();
        }
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            guarded.nightly();
            assertThat(guarded.report()).contains("report");
            assertThat(guarded.quote("q1")).isEqualTo("fresh q1");
            assertThat(state.runs).hasValue(3);
        });
    }

    @Test
    void aNullOrBlankKeyIsRefusedBeforeRedisIsTouched() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            long before = scriptCalls();
            assertThatThrownBy(() -> guarded.charge(null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key '#orderId'").hasMessageContaining("is null");
            assertThatThrownBy(() -> guarded.charge(" ")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is blank");
            assertThatThrownBy(() -> guarded.chargeAll(List.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            assertThat(scriptCalls()).isEqualTo(before);
            assertThat(state.runs).hasValue(0);
        });
    }

    @Test
    void aCollectionKeyLocksEveryElementAtOnceInSortedOrder() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            state.observer = observer;
            assertThat(guarded.chargeAll(List.of("b", "a", "b"))).containsExactly("bill:a", "bill:b");
            assertThat(state.lockedInside).isTrue();
            assertThat(observer.getLock("bill:a").isLocked()).isFalse();
        });
    }

    @Test
    void aNestedCallWithTheSameKeyReentersTheLock() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            state.self = guarded;
            state.relock = context.getBean(Relock.class);
            assertThat(guarded.outer("n1")).isEqualTo(2);
            assertThat(observer.getLock("nest:n1").isLocked()).isFalse();
        });
    }

    @Test
    void aMetaAnnotationCarriesTheLockSettings() {
        DistributedLock taken = observer.getLock("exclusive");
        taken.lock();
        try {
            runner(GuardedConfig.class).run(context -> {
                Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
                assertThatThrownBy(guarded::exclusive).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("'exclusive'");
            });
        } finally {
            taken.unlock();
        }
    }

    @Test
    void fencedCallsSeeTokensThatGrowWithEveryHolder() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            long first = guarded.fenced();
            long second = guarded.fenced();
            assertThat(second).isGreaterThan(first);
            assertThatThrownBy(() -> RelockLocks.current()).isInstanceOf(IllegalStateException.class);
        });
    }

    @Test
    void whenRedisDiesWhileTheCallWaitsTheMethodNeverRuns() {
        DistributedLock taken = observer.getLock("bill:o3");
        taken.lock();
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            CompletableFuture<List<String>> call = CompletableFuture.supplyAsync(() -> guarded.chargeBriefly("o3"));
            Eventually.await(PROMPTLY, "the call waits on the lock's channel", () -> subscribers("bill:o3") == 1);
            server.kill();
            // A waiter rides through an outage until its wait (5 s) is over, then reports Redis's failure.
            assertThatThrownBy(() -> call.get(PROMPTLY.toMillis() * 3, TimeUnit.MILLISECONDS))
                    .hasCauseInstanceOf(RelockException.class);
            assertThat(state.runs).hasValue(0);
        });
    }

    @Test
    void aFixedLeaseThatRunsOutDuringTheCallIsReportedAfterIt() {
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            state.observer = observer;
            assertThatThrownBy(guarded::outlivesItsLease).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'short'");
            assertThat(state.lostSeenInside).isTrue();
            assertThat(state.runs).hasValue(1);
        });
    }

    @Test
    void aWatchdogLockTakenAwayDuringTheCallIsReportedAfterItOrOnlyLogged() {
        for (String mode : List.of("throw", "log")) {
            runner(GuardedConfig.class, "relock.watchdog-timeout=300ms", "relock.on-lock-lost=" + mode).run(context -> {
                Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
                state.server = server;
                if (mode.equals("throw")) {
                    assertThatThrownBy(guarded::losesItsLock).isInstanceOf(LockLostException.class)
                            .hasMessageContaining("'stolen'");
                } else {
                    assertThat(guarded.losesItsLock()).isEqualTo("done");
                }
                assertThat(state.lostSeenInside).isTrue();
            });
        }
    }

    @Test
    void anInterruptWhileWaitingKeepsTheFlagAndTheMethodNeverRuns() throws Exception {
        DistributedLock taken = observer.getLock("bill:o4");
        taken.lock();
        try {
            runner(GuardedConfig.class).run(context -> {
                Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
                AtomicBoolean flagKept = new AtomicBoolean();
                List<Throwable> thrown = new ArrayList<>();
                Thread caller = new Thread(() -> {
                    try {
                        guarded.chargeSlowly("o4");
                    } catch (LockNotAcquiredException e) {
                        thrown.add(e);
                        flagKept.set(Thread.currentThread().isInterrupted());
                    }
                });
                caller.start();
                Eventually.await(PROMPTLY, "the call waits on the lock's channel", () -> subscribers("bill:o4") == 1);
                caller.interrupt();
                caller.join(PROMPTLY.toMillis());
                assertThat(caller.isAlive()).isFalse();
                assertThat(thrown).singleElement().satisfies(e -> assertThat(e.getCause())
                        .isInstanceOf(InterruptedException.class));
                assertThat(flagKept).isTrue();
                assertThat(state.runs).hasValue(0);
            });
        } finally {
            taken.unlock();
        }
    }

    @Test
    void manyVirtualThreadsNeverOverlapInsideTheMethod() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        runner(GuardedConfig.class).run(context -> {
            Guarded guarded = context.getBean(Guarded.class);
            State state = context.getBean(State.class);
            ExecutorService executor = (ExecutorService) java.util.concurrent.Executors.class
                    .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            try {
                List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    calls.add(executor.submit(() -> {
                        guarded.exclusiveCounter();
                        return null;
                    }));
                }
                for (Future<?> call : calls) {
                    call.get(PROMPTLY.toMillis() * 6, TimeUnit.MILLISECONDS);
                }
            } finally {
                executor.shutdownNow();
            }
            assertThat(state.overlaps).hasValue(0);
            assertThat(state.runs).hasValue(64);
        });
    }

    @Test
    void theTemplateHasTheSameSemanticsForCodeWithoutAProxy() {
        runner(GuardedConfig.class).run(context -> {
            RelockTemplate template = context.getBean(RelockTemplate.class);
            Supplier<List<String>> inside = () -> RelockLocks.current().lockNames();
            assertThat(template.execute("tpl:1", Duration.ZERO, inside)).containsExactly("tpl:1");
            DistributedLock taken = observer.getLock("tpl:2");
            taken.lock();
            try {
                AtomicInteger ran = new AtomicInteger();
                assertThatThrownBy(() -> template.run("tpl:2", Duration.ofMillis(50), ran::incrementAndGet))
                        .isInstanceOf(LockNotAcquiredException.class);
                assertThat(ran).hasValue(0);
            } finally {
                taken.unlock();
            }
            assertThatThrownBy(() -> template.execute(" ", null, inside)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("blank");
            assertThatThrownBy(() -> template.execute(WithLock.Type.REENTRANT, List.of("x"), null, Duration.ZERO, inside))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        });
    }

    @Test
    void wrongAnnotationSettingsFailTheStartNamingTheMethod() {
        runner(SkipOnIntConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("SkipOnInt.count()")
                .hasMessageContaining("SKIP needs a void or Optional return type"));
        runner(MissingFallbackConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("fallback method nowhere not found"));
        runner(BadDurationConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("waitTime '5 parsecs' is not a duration"));
        runner(BadKeyConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("is not a SpEL expression"));
        runner(UnreachableConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("Unreachable.later()")
                .hasStackTraceContaining("a final method cannot be intercepted"));
        runner(AsynchronousConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("it returns Future: the lock can follow a CompletableFuture"));
    }

    private long scriptCalls() {
        long calls = 0;
        for (String line : server.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                calls += Long.parseLong(line.replaceAll(".*calls=(\\d+).*", "$1"));
            }
        }
        return calls;
    }

    private long subscribers(String lockName) {
        List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{" + lockName + "}");
        return (Long) reply.get(1);
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @WithLock(name = "exclusive", waitTime = "0")
    @interface Exclusive {}

    @Configuration(proxyBeanMethods = false)
    static class GuardedConfig {
        @Bean
        State state() {
            return new State();
        }

        @Bean
        Guarded guarded(State state) {
            return new Guarded(state);
        }
    }

    /** What the test and the guarded bean share: the bean itself is a proxy, its fields are not the target's. */
    static class State {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicBoolean inside = new AtomicBoolean();
        volatile Relock observer;
        volatile RedisServer server;
        volatile Guarded self;
        volatile Relock relock;
        volatile boolean lockedInside;
        volatile boolean lostSeenInside;
    }

    static class Guarded {

        private final State state;

        Guarded(State state) {
            this.state = state;
        }

        @WithLock(name = "bill", key = "#orderId", waitTime = "${test.wait}")
        public List<String> charge(String orderId) {
            state.runs.incrementAndGet();
            state.lockedInside = state.observer.getLock("bill:" + orderId).isLocked();
            return RelockLocks.current().lockNames();
        }

        @WithLock(name = "bill", key = "#orderIds", waitTime = "1s")
        public List<String> chargeAll(List<String> orderIds) {
            state.runs.incrementAndGet();
            state.lockedInside = orderIds.stream().allMatch(id -> state.observer.getLock("bill:" + id).isLocked());
            return RelockLocks.current().lockNames();
        }

        @WithLock(name = "bill", key = "#p0", waitTime = "5s")
        public List<String> chargeBriefly(String orderId) {
            state.runs.incrementAndGet();
            return RelockLocks.current().lockNames();
        }

        @WithLock(name = "bill", key = "#p0", waitTime = "30s")
        public List<String> chargeSlowly(String orderId) {
            state.runs.incrementAndGet();
            return RelockLocks.current().lockNames();
        }

        @WithLock(value = "nightly", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public void nightly() {
            state.runs.incrementAndGet();
        }

        @WithLock(value = "nightly", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public Optional<String> report() {
            state.runs.incrementAndGet();
            return Optional.of("report");
        }

        @WithLock(name = "quote", key = "#id", waitTime = "0", fallback = "cachedQuote")
        public String quote(String id) {
            state.runs.incrementAndGet();
            return "fresh " + id;
        }

        String cachedQuote(String id, LockNotAcquiredException notAcquired) {
            return "cached " + id + " (" + notAcquired.lockNames().get(0) + " busy)";
        }

        @WithLock(name = "nest", key = "#id")
        public int outer(String id) {
            return state.self.inner(id);
        }

        @WithLock(name = "nest", key = "#id")
        public int inner(String id) {
            return state.relock.getLock("nest:" + id).getHoldCount();
        }

        @Exclusive
        public void exclusive() {
            state.runs.incrementAndGet();
        }

        @WithLock(name = "counter", waitTime = "60s")
        public void exclusiveCounter() {
            if (!state.inside.compareAndSet(false, true)) {
                state.overlaps.incrementAndGet();
            }
            state.runs.incrementAndGet();
            state.inside.set(false);
        }

        @WithLock(name = "fenced", type = WithLock.Type.FENCED, waitTime = "1s")
        public long fenced() {
            return RelockLocks.current().token();
        }

        @WithLock(name = "short", leaseTime = "300ms")
        public void outlivesItsLease() {
            state.runs.incrementAndGet();
            Eventually.await(PROMPTLY, "the lease ran out", () -> !state.observer.getLock("short").isLocked());
            state.lostSeenInside = RelockLocks.current().isLost();
        }

        @WithLock(name = "stolen")
        public String losesItsLock() {
            state.server.command("DEL", "stolen");
            Eventually.await(PROMPTLY, "the watchdog reported the loss", () -> RelockLocks.current().isLost());
            state.lostSeenInside = true;
            return "done";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SkipOnIntConfig {
        @Bean
        SkipOnInt skipOnInt() {
            return new SkipOnInt();
        }
    }

    static class SkipOnInt {
        @WithLock(name = "x", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public int count() {
            return 1;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class MissingFallbackConfig {
        @Bean
        MissingFallback missingFallback() {
            return new MissingFallback();
        }
    }

    static class MissingFallback {
        @WithLock(name = "x", fallback = "nowhere")
        public String get(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadDurationConfig {
        @Bean
        BadDuration badDuration() {
            return new BadDuration();
        }
    }

    static class BadDuration {
        @WithLock(name = "x", waitTime = "5 parsecs")
        public void run() {}
    }

    @Configuration(proxyBeanMethods = false)
    static class BadKeyConfig {
        @Bean
        BadKey badKey() {
            return new BadKey();
        }
    }

    static class BadKey {
        @WithLock(name = "x", key = "#id +")
        public void run(String id) {}
    }

    @Configuration(proxyBeanMethods = false)
    static class UnreachableConfig {
        @Bean
        Unreachable unreachable() {
            return new Unreachable();
        }
    }

    static class Unreachable {
        @WithLock(name = "fine")
        public void now() {}

        @WithLock(name = "x")
        public final void later() {}
    }

    @Configuration(proxyBeanMethods = false)
    static class AsynchronousConfig {
        @Bean
        Asynchronous asynchronous() {
            return new Asynchronous();
        }
    }

    static class Asynchronous {
        @WithLock(name = "x")
        public Future<String> start() {
            return CompletableFuture.completedFuture("started");
        }
    }
}
