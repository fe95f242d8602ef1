package io.relock.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * S0's floor for a JVM client: what Lettuce alone does against the same server, with no lock
 * library, measured in the driver beside redis-benchmark's ceiling. redis-benchmark is one C
 * thread that sends and reads on its own; a JVM client hands each command to an I/O thread and
 * is woken when the reply is in, and on this machine that costs more than the round trip itself.
 * Three numbers, each a row of the S0 table:
 * <ul>
 *   <li>{@value #ROUND_TRIP}: a synchronous EVALSHA of S0's lock script from one thread, as a
 *       JVM client sees one round trip; an uncontended cycle is two of them;</li>
 *   <li>{@value #HAND_OFF}: the bare bones of a hand-off, shaped as S3's, between two
 *       connections of one client instance: after a {@value S3HandOff#HOLD_MILLIS} ms pause,
 *       one connection runs a script that deletes a key and publishes; another connection's
 *       listener completes a future that a thread is blocked on; measured from the call to
 *       that thread running. A lock library's hand-off cannot take less: its release is at
 *       least this script, and its waiter at least this wake-up.</li>
 *   <li>{@value #HAND_OFF_TWO_CLIENTS}: the same with the publishing and the listening
 *       connection in two client instances, each with its own I/O threads, as the participants
 *       of {@code S3/w1c} are. Reported beside the first, which stays the goals' yardstick: it
 *       tells how much of a cross-client hand-off is the second client's threads, not the
 *       library.</li>
 * </ul>
 */
final class JvmFloor {

    static final String ROUND_TRIP = "JVM EVALSHA lock (Lettuce, sync)";
    static final String HAND_OFF = "JVM publish → woken thread (Lettuce)";
    static final String HAND_OFF_TWO_CLIENTS = "JVM publish → woken thread, 2 clients (Lettuce)";

    private static final String RELEASE_SCRIPT = "redis.call('del', KEYS[1]); return redis.call('publish', KEYS[2], ARGV[1])";
    private static final String CHANNEL = "bench:s0:floor";
    private static final String OTHER_CLIENT_CHANNEL = "bench:s0:floor:other";
    private static final Duration ROUND_TIMEOUT = Duration.ofSeconds(10);

    private JvmFloor() {
    }

    /** Runs the three, each for about {@code window} after a warm-up as long (the JIT needs thousands of calls). */
    static List<S0Ceiling.Row> run(RedisServer server, Duration window, int repeat) throws Exception {
        RedisClient client = RedisClient.create(server.uri());
        RedisClient otherClient = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> commands = client.connect(StringCodec.UTF8);
                StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub(StringCodec.UTF8);
                StatefulRedisPubSubConnection<String, String> otherPubSub = otherClient.connectPubSub(StringCodec.UTF8)) {
            S0Ceiling.Row roundTrip = roundTrip(commands, window, repeat);
            S0Ceiling.Row handOff = handOff(commands, pubSub, CHANNEL, HAND_OFF, window, repeat);
            S0Ceiling.Row twoClients = handOff(commands, otherPubSub, OTHER_CLIENT_CHANNEL, HAND_OFF_TWO_CLIENTS,
                    window, repeat);
            commands.sync().flushall();
            return List.of(roundTrip, handOff, twoClients);
        } finally {
            otherClient.shutdown(0, 2, TimeUnit.SECONDS);
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private static S0Ceiling.Row roundTrip(StatefulRedisConnection<String, String> connection, Duration window,
            int repeat) throws Exception {
        String sha = connection.sync().scriptLoad(S0Ceiling.LOCK_SCRIPT);
        Samples samples = new Samples();
        Round round = () -> {
            long sent = System.nanoTime();
            connection.async().evalsha(sha, ScriptOutputType.INTEGER,
                    new String[] {"bench:s0:jvm:" + samples.count() % 10_000}, "30000", "bench-owner")
                    .get(ROUND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            samples.add(System.nanoTime() - sent);
        };
        runFor(window, round);
        samples.clear();
        long started = System.nanoTime();
        runFor(window, round);
        return samples.row(repeat, ROUND_TRIP, System.nanoTime() - started);
    }

    private static S0Ceiling.Row handOff(StatefulRedisConnection<String, String> commands,
            StatefulRedisPubSubConnection<String, String> pubSub, String channel, String test, Duration window,
            int repeat) throws Exception {
        String sha = commands.sync().scriptLoad(RELEASE_SCRIPT);
        AtomicReference<CompletableFuture<Void>> message = new AtomicReference<>(new CompletableFuture<>());
        pubSub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String from, String text) {
                message.get().complete(null);
            }
        });
        pubSub.sync().subscribe(channel);
        BlockingQueue<Runnable> rounds = new LinkedBlockingQueue<>();
        Thread waiter = new Thread(() -> {
            try {
                while (true) {
                    rounds.take().run();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bench-floor-waiter");
        waiter.setDaemon(true);
        waiter.start();
        try {
            Samples samples = new Samples();
            Round round = () -> {
                CompletableFuture<Void> published = new CompletableFuture<>();
                message.set(published);
                CompletableFuture<Long> woken = new CompletableFuture<>();
                rounds.add(() -> {
                    published.join();
                    woken.complete(System.nanoTime());
                });
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(S3HandOff.HOLD_MILLIS);
                for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                    LockSupport.parkNanos(left);
                }
                long sent = System.nanoTime();
                commands.async().evalsha(sha, ScriptOutputType.INTEGER, new String[] {"bench:s0:floor", channel}, "7")
                        .get(ROUND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                samples.add(woken.get(ROUND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) - sent);
            };
            runFor(window, round);
            samples.clear();
            long started = System.nanoTime();
            runFor(window, round);
            return samples.row(repeat, test, System.nanoTime() - started);
        } finally {
            waiter.interrupt();
        }
    }

    /** One measured step. */
    private interface Round {
        void run() throws Exception;
    }

    private static void runFor(Duration duration, Round round) throws Exception {
        long until = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - until < 0) {
            round.run();
        }
    }

    /** Latencies in nanoseconds. */
    private static final class Samples {

        private long[] nanos = new long[1024];
        private int count;

        void add(long value) {
            if (count == nanos.length) {
                nanos = Arrays.copyOf(nanos, count * 2);
            }
            nanos[count++] = value;
        }

        int count() {
            return count;
        }

        void clear() {
            count = 0;
        }

        S0Ceiling.Row row(int repeat, String test, long elapsedNanos) {
            long[] sorted = Arrays.copyOf(nanos, count);
            Arrays.sort(sorted);
            return new S0Ceiling.Row(repeat, test, 1, count / (elapsedNanos / 1e9), at(sorted, 0.50) / 1e6,
                    at(sorted, 0.99) / 1e6);
        }

        private static double at(long[] sorted, double quantile) {
            return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) (quantile * sorted.length))];
        }
    }
}
