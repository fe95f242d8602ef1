package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.LockLostException;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.reactor.ReactiveLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive face on a database, as on Redis: work under the lock from two clients never
 * overlaps, and a hold lost to a force-unlock stops the {@code Flux} it guards with
 * {@link LockLostException}, its subscription cancelled.
 */
class ReactiveOnDatabaseTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(15);

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private Relock client(HikariDataSource dataSource, Duration watchdog) {
        Relock relock = RelockJdbc.builder(dataSource).createTable(true).config(RelockConfig.builder()
                .singleServer(RelockJdbc.PLACEHOLDER_SERVER).watchdogTimeout(watchdog).build()).build();
        closing.add(relock);
        return relock;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void workUnderTheLockFromTwoClientsNeverOverlaps(Database database) {
        HikariDataSource dataSource = database.freshDataSource();
        closing.add(dataSource);
        ReactiveLock a = ReactiveLock.of(client(dataSource, Duration.ofSeconds(30)).getLock("reactive"));
        ReactiveLock b = ReactiveLock.of(client(dataSource, Duration.ofSeconds(30)).getLock("reactive"));
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        Mono<Integer> work = Mono.fromCallable(() -> {
            if (!inside.compareAndSet(false, true)) {
                overlaps.incrementAndGet();
            }
            Thread.yield();
            inside.set(false);
            return done.incrementAndGet();
        }).subscribeOn(Schedulers.boundedElastic());

        Flux.range(0, 40).flatMap(i -> (i % 2 == 0 ? a : b).withLock(work), 8).blockLast(PROMPTLY);

        assertThat(overlaps).as("overlapping sections").hasValue(0);
        assertThat(done).hasValue(40);
        assertThat(a.lock().isLocked()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aForceUnlockStopsTheFluxWithLockLost(Database database) throws Exception {
        HikariDataSource dataSource = database.freshDataSource();
        closing.add(dataSource);
        Relock holder = client(dataSource, Duration.ofMillis(900));
        Relock other = client(dataSource, Duration.ofSeconds(30));
        Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
        CountDownLatch cancelled = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Flux<Integer> guarded = ReactiveLock.of(holder.getLock("streamed"))
                .withLock(source.asFlux().doOnSubscribe(s -> running.countDown()).doOnCancel(cancelled::countDown));

        var outcome = guarded.doOnNext(seen::add).then().toFuture();
        assertThat(running.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the work began").isTrue();
        source.tryEmitNext(1);
        assertThat(other.forceUnlock("streamed")).isTrue();

        assertThat(cancelled.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the work cancelled").isTrue();
        assertThat(outcome).failsWithin(PROMPTLY).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(LockLostException.class);
        assertThat(source.tryEmitNext(2)).as("nobody takes a value after the loss").isNotEqualTo(Sinks.EmitResult.OK);
        assertThat(seen).containsExactly(1);
    }
}
