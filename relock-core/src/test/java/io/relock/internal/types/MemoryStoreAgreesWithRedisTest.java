package io.relock.internal.types;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.relock.RelockConfig;
import io.relock.internal.ClientRuntime;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.model.Differential;
import io.relock.internal.model.Differential.State;
import io.relock.internal.model.Differential.Type;
import io.relock.internal.model.MemoryStore;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@link MemoryStore} against a real Redis: random sequences of every operation of the
 * reentrant, fenced and simple locks' drivers (the production ones, running the Lua scripts), tickets,
 * grants, hand-overs and repeats included, must answer as the model does at every step, leave
 * the same holders, counts, leases, tokens, queue and notes, and publish the same messages. So the model the Lincheck tests drive
 * cannot drift from the scripts: a script changed without the model fails here on the first step
 * that tells them apart.
 */
class MemoryStoreAgreesWithRedisTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final int SEQUENCES = 30;
    private static final int STEPS = 200;

    private ClientRuntime runtime;
    private RedisClient reader;
    private StatefulRedisConnection<String, String> connection;
    private StatefulRedisPubSubConnection<String, String> listener;

    @BeforeEach
    void connect(RedisServer server) {
        // The watchdog timeout is how long a force-release's note lives: as long as the model's.
        runtime = ClientRuntime.start(RelockConfig.builder().singleServer(server.uri())
                .watchdogTimeout(Duration.ofMinutes(10)).releaseOnShutdown(false).build());
        reader = RedisClient.create(server.uri());
        connection = reader.connect();
    }

    @AfterEach
    void close() {
        if (listener != null) {
            listener.close();
        }
        connection.close();
        reader.shutdown();
        runtime.close();
    }

    @Test
    void everyReplyEveryStateAndEveryMessageIsTheModels() {
        Differential.Backend backend = new OnRedis(runtime, connection.sync(), listen());
        int operations = 0;
        for (int sequence = 0; sequence < SEQUENCES; sequence++) {
            operations += Differential.run(backend, new Differential.Rules(), 1_000_003L * (sequence + 1), "redis",
                    STEPS);
        }
        assertThat(operations).as("operations compared")
                .isGreaterThan(SEQUENCES * STEPS);
    }

    /**
     * Every message on the lock channels, heard through a pattern subscription: Redis counts no
     * pattern among a channel's subscribers (PUBSUB NUMSUB), so the scripts see no other clients
     * listening and never yield to this one.
     */
    private BlockingQueue<String> listen() {
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        listener = reader.connectPubSub();
        listener.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String pattern, String channel, String message) {
                heard.add(channel + " " + message);
            }
        });
        listener.sync().psubscribe(LockKeys.LOCK_CHANNEL_PREFIX + ":*");
        return heard;
    }

    /** Redis through the production drivers; its state read with plain commands. */
    private record OnRedis(ClientRuntime runtime, RedisCommands<String, String> commands, BlockingQueue<String> heard)
            implements Differential.Backend {

        @Override
        public String channel(String name) {
            return runtime.keysOf(name, LockKeys.LOCK_CHANNEL_PREFIX).channel();
        }

        /**
         * The messages heard up to a marker published now: Redis sends one subscriber the messages
         * in the order they were published, so every message of the step came before it.
         */
        @Override
        public List<String> published() {
            String marker = LockKeys.LOCK_CHANNEL_PREFIX + ":differential-marker " + UUID.randomUUID();
            commands.publish(marker.substring(0, marker.indexOf(' ')), marker.substring(marker.indexOf(' ') + 1));
            List<String> messages = new ArrayList<>();
            try {
                for (String message = heard.poll(10, TimeUnit.SECONDS); !marker.equals(message);
                        message = heard.poll(10, TimeUnit.SECONDS)) {
                    if (message == null) {
                        throw new AssertionError("the marker was not heard in 10 s; heard " + messages);
                    }
                    messages.add(message);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            return messages;
        }

        @Override
        public LockDriver driver(Type type, String name) {
            LockKeys keys = runtime.keysOf(name, LockKeys.LOCK_CHANNEL_PREFIX);
            return switch (type) {
                case REENTRANT -> new ReentrantDriver(runtime, keys, "reentrant");
                case FENCED -> new FencedDriver(runtime, keys, "fenced");
                case SIMPLE -> new SimpleDriver(runtime, keys, "simple");
            };
        }

        @Override
        public RenewalGateway renewals() {
            return runtime.gateway();
        }

        @Override
        public Budget budget() {
            return runtime.gateway().budget();
        }

        @Override
        public State state(Type type, String name) {
            Map<String, Integer> holders = new LinkedHashMap<>();
            String granted = null;
            boolean queued = false;
            if (type == Type.SIMPLE) {
                String token = commands.get(name);
                if (token != null) {
                    holders.put(token, 1);
                }
            } else {
                for (Map.Entry<String, String> field : commands.hgetall(name).entrySet()) {
                    switch (field.getKey()) {
                        case "relock:granted" -> granted = field.getValue();
                        case "relock:queued" -> queued = true;
                        default -> holders.put(field.getKey(), Integer.valueOf(field.getValue()));
                    }
                }
            }
            List<String> queue = commands.zrange(LockKeys.ownKey(name, "handoff"), 0, -1);
            List<String> forced = commands.hkeys("{" + name + "}:relock:forced");
            String token = commands.get(LockKeys.ownKey(name, "token"));
            return new State(holders, commands.pttl(name), type == Type.FENCED && token != null ? Long.valueOf(token)
                    : null, Differential.bookkeeping(granted, queued, queue, forced));
        }
    }
}
