package io.relock;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A process holding a fenced lock: {@code <redis-uri> <lock-name> <watchdog-ms>}. Prints
 * {@code TOKEN <n>} once it holds the lock; on {@code write} it writes to the fenced resource
 * with its token and prints {@code WRITE accepted} or {@code WRITE rejected}.
 */
public final class FencedHolderMain {

    /** Accepts a write only with a token above every token seen so far. */
    static final String FENCED_WRITE = "local highest = tonumber(redis.call('get', KEYS[1]) or '0') "
            + "if tonumber(ARGV[1]) > highest then redis.call('set', KEYS[1], ARGV[1]) "
            + "redis.call('rpush', KEYS[2], ARGV[2]) return 1 end return 0";

    private FencedHolderMain() {}

    public static void main(String[] args) throws Exception {
        RelockConfig config = RelockConfig.builder()
                .singleServer(args[0])
                .watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2])))
                .build();
        RedisClient redis = RedisClient.create(args[0]);
        try (Relock relock = Relock.create(config); StatefulRedisConnection<String, String> connection = redis.connect()) {
            long token = relock.getFencedLock(args[1]).lockAndGetToken();
            System.out.println("TOKEN " + token);
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("write")) {
                    Long accepted = connection.sync().eval(FENCED_WRITE, ScriptOutputType.INTEGER,
                            new String[] {"resource:highest-token", "resource:writes"}, Long.toString(token), "child");
                    System.out.println(accepted == 1 ? "WRITE accepted" : "WRITE rejected");
                    System.out.flush();
                    return;
                }
            }
        } finally {
            redis.shutdown();
        }
    }
}
