package com.example.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.Relock;
import io.relock.RelockConfig;
// tag::reactor-imports[]
import io.relock.reactor.ReactiveLock;
import reactor.core.publisher.Mono;
// end::reactor-imports[]
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The Reactive example of docs/reactive-and-kotlin.md, compiled from the same text (the tagged
 * regions) and run against a Redis server that relock-testkit starts: debits of one account from
 * many concurrent pipelines over two clients lose no update, and a nested withLock in the same
 * pipeline re-enters.
 */
class ReactiveAccountTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private Relock relock;
    private Relock otherNode;

    /** An asynchronous store: a read and a write that take a while, on Reactor's timer threads. */
    static final class Balances {
        private final Map<String, Integer> stored = new ConcurrentHashMap<>(Map.of("42", 1000));

        Mono<Integer> read(String account) {
            return Mono.delay(Duration.ofMillis(1)).map(tick -> stored.get(account));
        }

        Mono<Integer> write(String account, int balance) {
            return Mono.delay(Duration.ofMillis(1)).map(tick -> {
                stored.put(account, balance);
                return balance;
            });
        }
    }

    private final Balances balances = new Balances();

    @BeforeEach
    void start(RedisServer server) {
        relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
        otherNode = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
    }

    @AfterEach
    void close() {
        relock.close();
        otherNode.close();
    }

    Mono<Integer> debit(Relock relock, int amount) {
        // tag::reactor-code[]
        ReactiveLock account = ReactiveLock.of(relock.getLock("account:42"));

        Mono<Integer> debit = account.withLock(              // taken on subscription, never blocks a thread
                balances.read("42")
                        .flatMap(balance -> balances.write("42", balance - amount)));
        // released when the work completes, errors or is cancelled; a lost lease errors with LockLostException
        // end::reactor-code[]
        return debit;
    }

    @Test
    void concurrentDebitsOverTwoNodesLoseNoUpdate() {
        List<Mono<Integer>> debits = IntStream.range(0, 100)
                .mapToObj(i -> debit(i % 2 == 0 ? relock : otherNode, 10))
                .toList();

        Flux.merge(debits).blockLast(Duration.ofSeconds(60));

        assertThat(balances.read("42").block()).isEqualTo(0);
        assertThat(relock.getLockInfo("account:42").isLocked()).isFalse();
    }

    @Test
    void aNestedWithLockInTheSamePipelineReenters() {
        ReactiveLock account = ReactiveLock.of(relock.getLock("account:42"));

        // The inner work reads Redis with a blocking call: it runs on a thread that may block.
        Mono<Long> holdCount = Mono.fromCallable(() ->
                        relock.getLockInfo("account:42").holders().values().iterator().next())
                .subscribeOn(Schedulers.boundedElastic());
        Long holds = account.withLock(account.withLock(holdCount)).block(Duration.ofSeconds(10));

        assertThat(holds).isEqualTo(2L);
    }
}
