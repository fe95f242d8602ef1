package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A differential test of the back ends: the same random sequences of operations (acquires that
 * do not wait, re-entries, releases by owners that hold and by owners that do not, force-unlocks,
 * inspections), by owners of two clients on three names of reentrant, simple and fenced locks,
 * run against real Redis, PostgreSQL and MariaDB, must answer alike at every step: the database
 * back end cannot drift from the Redis scripts' behaviour without this failing on the first
 * operation where they part.
 */
class BackEndsAgreeTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final int SEQUENCES = 6;
    private static final int STEPS = 120;
    private static final long[] OWNERS = {101, 102, 103, 104};

    @Test
    void redisPostgresAndMariaDbAnswerEveryStepAlike(RedisServer server) throws Exception {
        for (int sequence = 0; sequence < SEQUENCES; sequence++) {
            long seed = 7919L * (sequence + 1);
            List<String> onRedis = run(seed, () -> Relock.create(RelockConfig.builder().singleServer(server.uri())
                    .releaseOnShutdown(false).build()), "redis-" + sequence);
            for (Database database : availableDatabases()) {
                try (HikariDataSource dataSource = database.freshDataSource()) {
                    List<String> onDatabase = run(seed, () -> RelockJdbc.builder(dataSource).createTable(true).build(),
                            "db-" + sequence);
                    assertThat(onDatabase).as("%s against Redis, seed %d", database, seed)
                            .containsExactlyElementsOf(onRedis);
                }
            }
        }
    }

    private static List<Database> availableDatabases() {
        List<Database> databases = new ArrayList<>(List.of(Database.POSTGRESQL));
        if (io.relock.testkit.MariaDbServer.binary().isPresent()) {
            databases.add(Database.MARIADB);
        }
        return databases;
    }

    /** One sequence on two clients of one back end: each step's answer, as text. */
    private static List<String> run(long seed, Supplier<Relock> clients, String prefix) throws Exception {
        Random random = new Random(seed);
        List<String> answers = new ArrayList<>();
        try (Relock a = clients.get(); Relock b = clients.get()) {
            Map<Long, Long> tokens = new TreeMap<>();
            for (int step = 0; step < STEPS; step++) {
                Relock client = random.nextBoolean() ? a : b;
                long owner = OWNERS[random.nextInt(OWNERS.length)];
                String type = switch (random.nextInt(3)) {
                    case 0 -> "reentrant";
                    case 1 -> "simple";
                    default -> "fenced";
                };
                String name = prefix + ":" + type + ":" + random.nextInt(2);
                DistributedLock lock = switch (type) {
                    case "simple" -> client.getSimpleLock(name);
                    case "fenced" -> client.getFencedLock(name);
                    default -> client.getLock(name);
                };
                String who = (client == a ? "a" : "b") + owner;
                String subject = type + name.substring(name.lastIndexOf(':'));
                int op = random.nextInt(10);
                String answer;
                if (op < 4) {
                    answer = outcome(() -> lock.tryLockAsync(0, -1, TimeUnit.MILLISECONDS, owner)
                            .toCompletableFuture().join());
                    if (lock instanceof FencedLock fenced && "true".equals(answer)) {
                        // Tokens differ between back ends; that each hold's token grows does not.
                        long token = fenced.getToken();
                        Long before = tokens.put((long) name.hashCode(), token);
                        answer += before == null || token >= before ? " token-grows" : " token-shrank";
                    }
                } else if (op < 7) {
                    answer = outcome(() -> {
                        lock.unlockAsync(owner).toCompletableFuture().join();
                        return "released";
                    });
                } else if (op == 7) {
                    answer = outcome(() -> lock.forceUnlock());
                } else if (op == 8) {
                    answer = "locked=" + lock.isLocked() + " held-by-" + who + "=" + lock.isHeldByThread(owner);
                } else {
                    answer = "holders=" + client.getLockInfo(name).holders().values();
                }
                answers.add(step + " " + who + " " + subject + " op" + op + ": " + answer);
            }
        }
        return answers;
    }

    /** The value, or the kind of exception (the messages differ between back ends). */
    private static String outcome(Supplier<Object> call) {
        try {
            return String.valueOf(call.get());
        } catch (CompletionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }
}
