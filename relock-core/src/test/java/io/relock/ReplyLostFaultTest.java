package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.internal.redis.Script;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every lock type's acquire, re-entry, release, renewal and waiting, with the reply of one
 * chosen script call lost: a {@link FaultProxy} between the client and Redis lets the call run
 * on Redis and cuts the connection before the reply reaches the client. The client retries; the
 * scripts recognise the repeat. Each test ends with the history check: what Redis holds is
 * exactly what the clients believe they hold (no second hold from a repeat, no hold released
 * twice, nothing held that no client knows of), and a rival is excluded exactly while it should be.
 */
class ReplyLostFaultTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    /** One lock type with the scripts whose replies the tests lose. */
    record Type(String name, BiFunction<Relock, String, DistributedLock> factory, Script acquire, Script release,
            Script renew, boolean reentrant) {

        DistributedLock lock(Relock client, String lockName) {
            return factory.apply(client, lockName);
        }

        /** The marker the proxy looks for: the script's SHA, as sent with EVALSHA. */
        static String marker(Script script) {
            return script.sha(false);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Type> types() {
        return Stream.of(
                new Type("reentrant", Relock::getLock, Script.LOCK_ACQUIRE, Script.LOCK_RELEASE, Script.LOCK_RENEW,
                        true),
                new Type("spin", Relock::getSpinLock, Script.LOCK_ACQUIRE, Script.LOCK_RELEASE, Script.LOCK_RENEW,
                        true),
                new Type("fenced", Relock::getFencedLock, Script.FENCED_ACQUIRE, Script.LOCK_RELEASE,
                        Script.LOCK_RENEW, true),
                new Type("fair", Relock::getFairLock, Script.FAIR_ACQUIRE, Script.FAIR_RELEASE, Script.LOCK_RENEW,
                        true),
                new Type("simple", Relock::getSimpleLock, Script.SIMPLE_ACQUIRE, Script.SIMPLE_RELEASE,
                        Script.SIMPLE_RENEW, false),
                new Type("write", (client, name) -> client.getReadWriteLock(name).writeLock(), Script.RW_WRITE_ACQUIRE,
                        Script.RW_WRITE_RELEASE, Script.LOCK_RENEW, true),
                new Type("read", (client, name) -> client.getReadWriteLock(name).readLock(), Script.RW_READ_ACQUIRE,
                        Script.RW_READ_RELEASE, Script.RW_READ_RENEW, true));
    }

    private RedisServer server;
    private FaultProxy proxy;
    private Clients direct;
    private Clients proxied;
    /** Reads what Redis holds, without the proxy. */
    private Relock observer;

    @BeforeEach
    void start() {
        server = RedisServer.start();
        proxy = FaultProxy.to(server);
        direct = new Clients(server);
        proxied = new Clients(Backend.single(server).withUri(proxy.uri()));
        observer = direct.create();
    }

    @AfterEach
    void stop() {
        proxied.close();
        direct.close();
        proxy.close();
        server.close();
    }

    private Map<String, Long> holdersOnRedis(String name) {
        return observer.getLockInfo(name).holders();
    }

    /** The owner field of the current thread in {@code client}, as the lock type stores it. */
    private static String field(Relock client, Type type) {
        String owner = client.clientId() + ":" + Thread.currentThread().getId();
        return type.name().equals("write") ? owner + ":write" : owner;
    }

    /** A rival in another client: the write lock excludes readers and writers alike. */
    private DistributedLock rival(Type type, String name) {
        Relock other = direct.create();
        return type.name().equals("read") ? other.getReadWriteLock(name).writeLock() : type.lock(other, name);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void anAcquireWhoseReplyIsLostTakesExactlyOneHold(Type type) {
        Relock client = proxied.create();
        DistributedLock lock = type.lock(client, "acquire");
        FaultProxy.Fault cut = proxy.cutBeforeReply(Type.marker(type.acquire()));

        assertThat(lock.tryLock()).as("the retry learns that the first run took the lock").isTrue();

        assertThat(cut.triggered()).isTrue();
        assertThat(holdersOnRedis("acquire")).containsExactly(Map.entry(field(client, type), 1L));
        DistributedLock rival = rival(type, "acquire");
        assertThat(rival.tryLock()).as("excluded while held").isFalse();
        lock.unlock();
        assertThat(holdersOnRedis("acquire")).as("one unlock frees it: no second hold").isEmpty();
        assertThat(rival.tryLock()).isTrue();
        rival.unlock();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void aReentryWhoseReplyIsLostCountsOnce(Type type) {
        if (!type.reentrant()) {
            return; // a plain lock cannot be re-entered: its acquire is covered above
        }
        Relock client = proxied.create();
        DistributedLock lock = type.lock(client, "reentry");
        lock.lock();
        FaultProxy.Fault cut = proxy.cutBeforeReply(Type.marker(type.acquire()));

        lock.lock();

        assertThat(cut.triggered()).isTrue();
        assertThat(holdersOnRedis("reentry")).containsExactly(Map.entry(field(client, type), 2L));
        lock.unlock();
        lock.unlock();
        assertThat(holdersOnRedis("reentry")).as("two unlocks free it: no phantom level").isEmpty();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void aReleaseWhoseReplyIsLostReleasesOnce(Type type) {
        Relock client = proxied.create();
        DistributedLock lock = type.lock(client, "release");
        lock.lock();
        if (type.reentrant()) {
            lock.lock();
        }
        FaultProxy.Fault cut = proxy.cutBeforeReply(Type.marker(type.release()));

        lock.unlock();

        assertThat(cut.triggered()).isTrue();
        DistributedLock rival = rival(type, "release");
        if (type.reentrant()) {
            assertThat(holdersOnRedis("release")).as("one level left, not zero")
                    .containsExactly(Map.entry(field(client, type), 1L));
            assertThat(rival.tryLock()).as("still excluded: the release ran once").isFalse();
            lock.unlock();
        }
        assertThat(holdersOnRedis("release")).isEmpty();
        assertThat(rival.tryLock()).isTrue();
        rival.unlock();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void aRenewalWhoseReplyIsLostKeepsTheHold(Type type) throws Exception {
        Relock client = proxied.create(Clients.SHORT_WATCHDOG);
        BlockingQueue<LockLostEvent> lost = new LinkedBlockingQueue<>();
        client.addLockListener(lost::add);
        BlockingQueue<WatchdogTickEvent> ticks = new LinkedBlockingQueue<>();
        client.addObserver(new LockObserver() {
            @Override
            public void onWatchdogTick(WatchdogTickEvent tick) {
                ticks.add(tick);
            }
        });
        DistributedLock lock = type.lock(client, "renewal");
        lock.lock();
        FaultProxy.Fault cut = proxy.cutBeforeReply(Type.marker(type.renew()));
        cut.awaitTriggered(PROMPTLY);

        // A tick reports once its renewals are back and the next one renews only after that: of
        // the ticks reported from here on, the first may be the one whose reply was lost, and the
        // second began after it ended. That one must find the hold and renew it.
        List<WatchdogTickEvent> seen = new ArrayList<>();
        ticks.drainTo(seen);
        WatchdogTickEvent maybeTheCutOne = ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        WatchdogTickEvent after = ticks.poll(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(maybeTheCutOne).as("a tick reported").isNotNull();
        assertThat(after).as("a tick after the lost reply").isNotNull();
        seen.add(maybeTheCutOne);
        seen.add(after);
        assertThat(after.renewed()).as("renewed after the lost reply").isEqualTo(1);
        assertThat(seen).as("ticks").allSatisfy(tick -> assertThat(tick.lost()).as("lost").isZero());
        assertThat(lost).as("no loss").isEmpty();

        assertThat(holdersOnRedis("renewal").values()).containsExactly(1L);
        assertThat(observer.getLockInfo("renewal").remainTimeToLive()).isPositive();
        lock.unlock();
        assertThat(holdersOnRedis("renewal")).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void aWaiterWhoseAttemptsReplyIsLostStillGetsTheLock(Type type) throws Exception {
        DistributedLock holder = rival(type, "waiting");
        holder.lock();
        Relock client = proxied.create();
        DistributedLock waiterLock = type.lock(client, "waiting");
        FaultProxy.Fault cut = proxy.cutBeforeReply(Type.marker(type.acquire()));
        CompletableFuture<Boolean> waiter = Threads.call(() -> {
            boolean acquired = waiterLock.tryLock(30, TimeUnit.SECONDS);
            if (acquired) {
                waiterLock.unlock();
            }
            return acquired;
        });
        cut.awaitTriggered(PROMPTLY);
        assertThat(waiter).as("the lost reply said 'busy'; it keeps waiting").isNotDone();

        holder.unlock();

        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(holdersOnRedis("waiting")).isEmpty();
    }

    @Test
    void anAcquireWhoseOutcomeStaysUnknownIsUndoneBeforeTheCallerHearsOfIt() {
        Relock client = proxied.create();
        DistributedLock lock = client.getLock("unknown");
        // The acquire runs on Redis; its reply (and every reply after it on that connection)
        // arrives only after the command timeout, which is all of tryLock()'s budget.
        proxy.delayReplies(Type.marker(Script.LOCK_ACQUIRE), Clients.COMMAND_TIMEOUT.multipliedBy(3));

        assertThatThrownBy(lock::tryLock).isInstanceOf(RelockTimeoutException.class);

        // The undo was sent behind the acquire on the same connection, so Redis ran it after.
        Eventually.await(PROMPTLY, "the uncertain acquire undone", () -> holdersOnRedis("unknown").isEmpty());
        // The client's own records, not a read on its connection: replies there stay late until
        // the held-back ones are through, which a loaded machine can make this read miss.
        assertThat(client.heldLocks()).as("the client believes it holds nothing").isEmpty();
        DistributedLock rival = rival(types().findFirst().orElseThrow(), "unknown");
        assertThat(rival.tryLock()).isTrue();
        rival.unlock();
    }

    @Test
    void aPubSubDropWhileAnAcquireIsInFlightFailsNothing() throws Exception {
        Relock client = proxied.create();
        // A waiter, so that the client's pub/sub connection is subscribed (a pub/sub client).
        DistributedLock holder = rival(types().findFirst().orElseThrow(), "held");
        holder.lock();
        DistributedLock waiterLock = client.getLock("held");
        CompletableFuture<Boolean> waiter = Threads.call(() -> {
            boolean acquired = waiterLock.tryLock(30, TimeUnit.SECONDS);
            if (acquired) {
                waiterLock.unlock();
            }
            return acquired;
        });
        Eventually.await(PROMPTLY, "the waiter subscribed", () -> observer.getLockInfo("held").waitingClients() > 0);

        // An acquire whose reply is held back while only the pub/sub connection is dropped.
        FaultProxy.Fault held = proxy.delayReplies(Type.marker(Script.LOCK_ACQUIRE), Duration.ofMillis(500));
        CompletableFuture<Boolean> acquire = Threads.call(() -> client.getLock("free").tryLock());
        held.awaitTriggered(PROMPTLY);
        server.command("CLIENT", "KILL", "TYPE", "pubsub");

        assertThat(acquire.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .as("its command connection never broke: the acquire stands").isTrue();
        assertThat(holdersOnRedis("free").values()).containsExactly(1L);
        holder.unlock();
        assertThat(waiter.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter resubscribed").isTrue();
    }

    @Test
    void aBlipDuringTryLockIsRiddenThrough() {
        Relock client = proxied.create();
        DistributedLock lock = client.getLock("blip");
        FaultProxy.Fault cut = proxy.cutBeforeRequest(Type.marker(Script.LOCK_ACQUIRE));

        assertThat(lock.tryLock()).as("the connection broke before the script ran; the retry took it").isTrue();

        assertThat(cut.triggered()).isTrue();
        assertThat(holdersOnRedis("blip").values()).containsExactly(1L);
        lock.unlock();
        assertThat(holdersOnRedis("blip")).isEmpty();
    }

    @Test
    void aRefusingServerFailsCallsWithoutAWaitAtOnceWithAConnectionException() {
        Relock client = proxied.create();
        DistributedLock lock = client.getLock("refused");
        proxy.refuse();
        // The refusal is seen once the client's first reconnect attempt fails.
        proxy.cutAll();
        Eventually.await(PROMPTLY, "a failed reconnect", () -> {
            try {
                lock.tryLock();
                return false;
            } catch (RelockConnectionException e) {
                return true;
            }
        });

        long start = System.nanoTime();
        assertThatThrownBy(lock::tryLock).isInstanceOf(RelockConnectionException.class);
        assertThatThrownBy(() -> client.getLockInfo("refused")).isInstanceOf(RelockConnectionException.class);
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(elapsed).as("no command timeout waited out").isLessThan(Clients.COMMAND_TIMEOUT.toMillis());

        proxy.heal();
        Eventually.await(PROMPTLY, "back after the server accepts again", () -> {
            try {
                return lock.tryLock();
            } catch (RelockConnectionException e) {
                return false;
            }
        });
        lock.unlock();
        assertThat(holdersOnRedis("refused")).isEmpty();
    }
}
