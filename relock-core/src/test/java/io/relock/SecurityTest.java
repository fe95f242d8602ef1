package io.relock;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.relock.internal.redis.Script;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisServer;
import io.relock.testkit.TlsCertificates;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Least privilege, credentials and TLS, against real redis-server processes: an ACL user allowed
 * only {@link #RELOCK_COMMANDS} can use every lock type, bad credentials fail at
 * {@link Relock#create} without showing the password, and {@code rediss://} works with a trusted
 * CA and is refused without one.
 */
class SecurityTest {

    /**
     * Every command Relock sends to a standalone server, directly or from its Lua scripts: Redis
     * checks the commands a script calls against the ACL of the user who runs it, so they must be
     * granted too. Found by running every lock type under an ACL user and removing commands one by
     * one (each removal makes {@link #anAclUserWithOnlyRelocksCommandsCanUseEveryLockType} fail);
     * the handshake ({@code HELLO} with {@code AUTH} and {@code SETNAME}) needs no grant.
     */
    private static final List<String> RELOCK_COMMANDS = List.of(
            // loading and running the scripts (EVAL when the server lost them: restart, SCRIPT FLUSH)
            "script|load", "evalsha", "eval",
            // waiting for an unlock; counting waiters for getLockInfo and, in the release scripts,
            // Redisson's waiters apart from Relock's
            "subscribe", "unsubscribe", "pubsub|numsub",
            // reading maxmemory-policy at create, to warn when lock keys can be evicted
            "info",
            // called by the scripts; exists, get, hget and pttl also directly (isLocked,
            // isHeldByCurrentThread, remainTimeToLive)
            "del", "exists", "get", "hdel", "hexists", "hget", "hgetall", "hincrby", "hkeys", "hlen", "hmget",
            "hset", "incr", "lindex", "lpop", "lrem", "pexpire", "pttl", "publish", "rpush", "set", "time", "type",
            "zadd", "zcard", "zrange", "zrem", "zremrangebyscore", "zscore");

    private static final String KEY_PREFIX = "app:locks:";

    /**
     * Keys and channels of locks named under {@link #KEY_PREFIX}: lock keys, their
     * {@code {hash-tagged}} companions (fair queues, fencing tokens, reader leases) and the unlock
     * channels, with the channels every Relock client subscribes to beside them (see
     * {@code PubSubChannels.markOf}). The unlock channels are key patterns too, as the release scripts take them as KEYS
     * (Redisson's convention), and Redis checks every KEYS argument against the key patterns.
     */
    private static final List<String> PREFIX_RULES = List.of(
            "~" + KEY_PREFIX + "*", "~{" + KEY_PREFIX + "*",
            "~redisson_lock__channel:{" + KEY_PREFIX + "*", "~redisson_rwlock:{" + KEY_PREFIX + "*",
            "&redisson_lock__channel:{" + KEY_PREFIX + "*", "&redisson_rwlock:{" + KEY_PREFIX + "*",
            "&relock:redisson_lock__channel:{" + KEY_PREFIX + "*", "&relock:redisson_rwlock:{" + KEY_PREFIX + "*");

    /** Commands Relock sends itself rather than from a script. */
    private static final Set<String> CLIENT_SIDE_COMMANDS =
            Set.of("script|load", "evalsha", "eval", "subscribe", "unsubscribe", "pubsub|numsub", "info");

    private static final String USER = "relock";
    private static final String PASSWORD = "acl-Pw-7f3b9c";
    private static final Duration PROMPTLY = Duration.ofSeconds(10);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    /** Short, so that every hold is renewed within the test; long enough for a loaded machine. */
    private static final Duration WATCHDOG = Duration.ofMillis(1500);

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<Relock> opened = new ArrayList<>();
    private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
    private String keyPrefix = "";

    /** Clients first: a client whose server is gone first would log its reconnect attempts. */
    @AfterEach
    void closeClientsThenServers() {
        opened.forEach(Relock::close);
        opened.clear();
        servers.forEach(RedisServer::close);
        servers.clear();
    }

    @Test
    void anAclUserWithOnlyRelocksCommandsCanUseEveryLockType() throws Exception {
        RedisServer server = start(RedisServer.builder());
        createUser(server, "~*", "&*");
        String uri = "redis://" + USER + ":" + PASSWORD + "@127.0.0.1:" + server.port();

        exerciseEveryLockType(server, () -> RelockConfig.builder().singleServer(uri), "");

        assertThat(relockConnections(server)).isNotEmpty()
                .allSatisfy(line -> assertThat(line).contains(" user=" + USER + " "));
        assertNoDenials(server);
    }

    @Test
    void anAclUserLimitedToTheKeyPrefixAndItsChannelsCanUseEveryLockType() throws Exception {
        RedisServer server = start(RedisServer.builder());
        createUser(server, PREFIX_RULES.toArray(String[]::new));
        String uri = "redis://" + USER + ":" + PASSWORD + "@127.0.0.1:" + server.port();

        exerciseEveryLockType(server, () -> RelockConfig.builder().singleServer(uri).keyPrefix(KEY_PREFIX),
                KEY_PREFIX);

        assertNoDenials(server);
        assertThat(dryRun(server, "SET", "other:key", "v")).contains("no permissions").contains("key");
        assertThat(dryRun(server, "PUBLISH", "other-channel", "0")).contains("no permissions").contains("channel");
    }

    @Test
    void theLeastPrivilegeUserMayRunNothingButRelocksCommands() {
        RedisServer server = start(RedisServer.builder());
        createUser(server, "~*", "&*");

        assertThat(dryRun(server, "EVALSHA", "0123456789012345678901234567890123456789", "1", "k")).isEqualTo("OK");
        assertThat(dryRun(server, "PUBSUB", "NUMSUB", "c")).isEqualTo("OK");
        for (List<String> command : List.of(List.of("FLUSHALL"), List.of("FLUSHDB"), List.of("KEYS", "*"),
                List.of("CONFIG", "SET", "requirepass", "x"), List.of("SCRIPT", "FLUSH"),
                List.of("ACL", "SETUSER", "intruder", "on"), List.of("CLIENT", "KILL", "ID", "1"),
                List.of("MONITOR"), List.of("SHUTDOWN"), List.of("DEBUG", "SLEEP", "0"),
                List.of("FUNCTION", "FLUSH"), List.of("RENAME", "a", "b"), List.of("EXPIRE", "k", "1"))) {
            assertThat(dryRun(server, command.toArray(String[]::new))).as("ACL DRYRUN %s", command)
                    .startsWith("This user has no permissions to run the");
        }
    }

    @Test
    void theCommandListIsExactlyWhatTheScriptsCallPlusWhatTheClientSends() {
        Pattern call = Pattern.compile("redis\\.p?call\\(\\s*['\"]([A-Za-z]+)['\"](?:\\s*,\\s*['\"]([A-Za-z]+)['\"])?");
        Set<String> scriptCommands = new TreeSet<>();
        for (Script script : Script.values()) {
            Matcher matcher = call.matcher(script.source(false));
            while (matcher.find()) {
                String command = matcher.group(1).toLowerCase(Locale.ROOT);
                // A container command is granted by subcommand (ACL's 'pubsub|numsub').
                scriptCommands.add(command.equals("pubsub") ? command + "|" + matcher.group(2).toLowerCase(Locale.ROOT)
                        : command);
            }
        }
        Set<String> expected = new TreeSet<>(scriptCommands);
        expected.addAll(CLIENT_SIDE_COMMANDS);

        assertThat(scriptCommands).as("commands in the scripts").isNotEmpty();
        assertThat(new TreeSet<>(RELOCK_COMMANDS)).hasSameSizeAs(RELOCK_COMMANDS).isEqualTo(expected);
    }

    @Test
    void aWrongPasswordOrAnUnknownUserFailsAtCreateNamingTheServerButNotThePassword() {
        RedisServer server = start(RedisServer.builder());
        createUser(server, "~*", "&*");
        String target = "127.0.0.1:" + server.port();
        String wrong = "Wr0ng-" + PASSWORD;
        List<RelockConfig> rejected = List.of(
                RelockConfig.builder().singleServer("redis://" + USER + ":" + wrong + "@" + target).build(),
                RelockConfig.builder().singleServer("redis://nobody:" + PASSWORD + "@" + target).build(),
                RelockConfig.builder().singleServer("redis://" + target).credentials(USER, wrong.toCharArray()).build(),
                RelockConfig.builder().singleServer("redis://" + target)
                        .credentials("nobody", PASSWORD.toCharArray()).build());

        String logged = capturingStandardError(() -> {
            for (RelockConfig config : rejected) {
                assertThat(config.toString()).doesNotContain(PASSWORD);
                assertThatThrownBy(() -> Relock.create(config)).as("create with %s", config)
                        .isInstanceOf(RelockConnectionException.class)
                        .hasMessageContaining(target)
                        .satisfies(e -> assertThat(messagesOf(e)).doesNotContain(PASSWORD).contains("WRONGPASS"));
            }
        });

        assertThat(logged).doesNotContain(PASSWORD);
        assertThat(authFailures(server)).as("failed logins the server logged").isGreaterThanOrEqualTo(rejected.size());
    }

    @Test
    void credentialsAreUsedWhenTheUriHasNoneAndTheUrisOwnWin() throws Exception {
        RedisServer server = start(RedisServer.builder());
        createUser(server, "~*", "&*");
        Relock viaBuilder = create(RelockConfig.builder().singleServer(server.uri())
                .credentials(USER, PASSWORD.toCharArray()));
        Relock viaUri = create(RelockConfig.builder()
                .singleServer("redis://" + USER + ":" + PASSWORD + "@127.0.0.1:" + server.port())
                .credentials(USER, "not-the-password".toCharArray()));

        handOver(server, viaBuilder, viaUri, "by-credentials", r -> r.getLock("by-credentials"),
                r -> r.getLock("by-credentials"), Waiting.SUBSCRIBED);

        assertThat(relockConnections(server)).hasSize(4)
                .allSatisfy(line -> assertThat(line).contains(" user=" + USER + " "));
        assertNoDenials(server);
    }

    @Test
    void redissWithTheTestCaTrustedLocksAndWakesWaiters() throws Exception {
        assumeTls();
        RedisServer server = start(RedisServer.builder().tls());
        createUser(server, "~*", "&*");
        String uri = "rediss://" + USER + ":" + PASSWORD + "@127.0.0.1:" + server.tlsPort();
        Relock a = create(RelockConfig.builder().singleServer(uri)
                .trustedCertificates(TlsCertificates.get().caCertificate()));
        Relock b = create(RelockConfig.builder().singleServer(uri)
                .trustedCertificates(TlsCertificates.get().caCertificate()));

        handOver(server, a, b, "over-tls", r -> r.getLock("over-tls"), r -> r.getLock("over-tls"),
                Waiting.SUBSCRIBED);

        assertThat(relockConnections(server)).hasSize(4);
        assertNoDenials(server);
    }

    @Test
    void redissWithoutTrustedCertificatesFailsAtCreate() {
        assumeTls();
        RedisServer server = start(RedisServer.builder().tls());
        String target = "127.0.0.1:" + server.tlsPort();
        // The JVM's default trust store does not know the CA the testkit generated.
        RelockConfig config = RelockConfig.builder().singleServer(server.tlsUri()).commandTimeout(COMMAND_TIMEOUT)
                .build();

        assertThatThrownBy(() -> Relock.create(config)).isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining(target)
                .satisfies(e -> assertThat(causes(e)).anyMatch(SSLHandshakeException.class::isInstance));
        assertThat(relockConnections(server)).isEmpty();
    }

    // ---- every lock type under one user -------------------------------------------------------

    /** How a test knows that the second contender is waiting. */
    private enum Waiting {
        /** Subscribed to the lock's unlock channel, as {@code getLockInfo} counts it. */
        SUBSCRIBED,
        /** In a fair lock's queue. */
        QUEUED,
        /** Retrying by backoff: spin locks and RedLock. */
        RETRYING
    }

    /**
     * For every lock type: a hold that the watchdog renews, the inspector, a timed wait that gives
     * up, a waiter woken by the unlock, a force-unlock, and (once the server lost its scripts) the
     * EVAL fallback. Every call runs as the configured user.
     */
    private void exerciseEveryLockType(RedisServer server, Supplier<RelockConfig.Builder> config,
            String keyPrefix) throws Exception {
        this.keyPrefix = keyPrefix;
        Relock a = create(config.get());
        Relock b = create(config.get());
        handOver(server, a, b, "plain", r -> r.getLock("plain"), r -> r.getLock("plain"), Waiting.SUBSCRIBED);

        long evalsBefore = calls(server, "eval");
        server.command("SCRIPT", "FLUSH"); // as after a restart: the next call must fall back to EVAL
        handOver(server, a, b, "fair", r -> r.getFairLock("fair"), r -> r.getFairLock("fair"), Waiting.QUEUED);
        assertThat(calls(server, "eval")).as("EVAL fallbacks").isGreaterThan(evalsBefore);

        handOver(server, a, b, "fenced", r -> r.getFencedLock("fenced"), r -> r.getFencedLock("fenced"),
                Waiting.SUBSCRIBED);
        FencedLock first = a.getFencedLock("tokens");
        long firstToken = first.lockAndGetToken();
        assertThat(first.getToken()).isEqualTo(firstToken);
        first.unlock();
        FencedLock second = b.getFencedLock("tokens");
        assertThat(second.tryLockAndGetToken()).isGreaterThan(firstToken);
        second.unlock();

        handOver(server, a, b, "simple", r -> r.getSimpleLock("simple"), r -> r.getSimpleLock("simple"),
                Waiting.SUBSCRIBED);
        handOver(server, a, b, "spin", r -> r.getSpinLock("spin"), r -> r.getSpinLock("spin"), Waiting.RETRYING);
        handOver(server, a, b, "rw", r -> r.getReadWriteLock("rw").writeLock(),
                r -> r.getReadWriteLock("rw").readLock(), Waiting.SUBSCRIBED);
        handOver(server, a, b, "rw-write", r -> r.getReadWriteLock("rw-write").readLock(),
                r -> r.getReadWriteLock("rw-write").writeLock(), Waiting.SUBSCRIBED);
        // Two readers: the first to leave keeps the lock alive for the other, at the longest lease left.
        DistributedLock readerA = a.getReadWriteLock("readers").readLock();
        DistributedLock readerB = b.getReadWriteLock("readers").readLock();
        readerA.lock();
        assertThat(readerB.tryLock()).isTrue();
        readerA.unlock();
        assertThat(readerB.isLocked()).isTrue();
        readerB.unlock();
        assertThat(readerB.isLocked()).isFalse();

        // Members are taken in name order: a waiter waits on m:1 first.
        handOver(server, a, b, "m:1", r -> r.getMultiLock(r.getLock("m:1"), r.getLock("m:2")),
                r -> r.getMultiLock(r.getLock("m:1"), r.getLock("m:2")), Waiting.SUBSCRIBED);

        // RedLock members must come from different clients; here they share the one server.
        Relock a2 = create(config.get());
        Relock a3 = create(config.get());
        Relock b2 = create(config.get());
        Relock b3 = create(config.get());
        Function<Relock, DistributedLock> redLock = r -> r == a
                ? a.getRedLock(a.getLock("red:1"), a2.getLock("red:2"), a3.getLock("red:3"))
                : b.getRedLock(b.getLock("red:1"), b2.getLock("red:2"), b3.getLock("red:3"));
        handOver(server, a, b, "red:1", redLock, redLock, Waiting.RETRYING);

        // Force-unlocking the waiters' holds is reported as a loss caused by the force-unlock (its
        // note read under the same ACL); a renewal that Redis refused would carry its error instead.
        assertThat(lost).allSatisfy(event -> assertThat(event.cause()).as("cause of %s", event)
                .isInstanceOf(LockForceUnlockedException.class));
    }

    /**
     * {@code a} takes the lock and keeps it through a renewal; {@code b} first gives up after a
     * short wait, then waits until {@code a} unlocks; {@code a} then force-unlocks {@code b}'s hold.
     */
    private void handOver(RedisServer server, Relock a, Relock b, String name, Function<Relock, DistributedLock> held,
            Function<Relock, DistributedLock> wanted, Waiting waiting) throws Exception {
        DistributedLock holder = held.apply(a);
        DistributedLock waiter = wanted.apply(b);
        holder.lock();
        assertThat(holder.isLocked()).as(name).isTrue();
        assertThat(holder.isHeldByCurrentThread()).as(name).isTrue();
        assertThat(holder.remainTimeToLive()).as(name).isPositive();
        awaitRenewal(name, holder);
        assertThat(a.getLockInfo(name).isLocked()).as(name).isTrue();
        assertThat(waiter.tryLock(30, MILLISECONDS)).as("%s: a short wait gives up", name).isFalse();

        long evalshas = calls(server, "evalsha");
        CompletableFuture<Boolean> acquired = Threads.call(() -> waiter.tryLock(PROMPTLY.toMillis(), MILLISECONDS));
        BooleanSupplier waiterSeen = switch (waiting) {
            case SUBSCRIBED -> () -> a.getLockInfo(name).waitingClients() > 0;
            case QUEUED -> () -> (Long) server.command("LLEN", "{" + keyPrefix + name + "}:queue") > 0;
            // Attempts come every few ms at first; a renewal of the holder adds at most one call.
            case RETRYING -> () -> calls(server, "evalsha") >= evalshas + 4;
        };
        Eventually.await(PROMPTLY, "a waiter " + waiting + " on '" + name + "'", waiterSeen);
        assertThat(acquired).as("%s: still waiting", name).isNotDone();
        holder.unlock();
        assertThat(acquired.get(PROMPTLY.toMillis(), MILLISECONDS)).as("%s: the waiter got it", name).isTrue();

        DistributedLock sameKindOnA = wanted.apply(a);
        assertThat(sameKindOnA.isLocked()).as(name).isTrue();
        assertThat(sameKindOnA.isHeldByCurrentThread()).as(name).isFalse();
        awaitRenewal(name, sameKindOnA);
        assertThat(sameKindOnA.forceUnlock()).as("%s: force-unlocked", name).isTrue();
        assertThat(waiter.isLocked()).as(name).isFalse();
        assertThat(a.getLockInfo(name).isLocked()).as(name).isFalse();
    }

    /** Returns once the lease of {@code lock} went up again: its holder's watchdog renewed it. */
    private static void awaitRenewal(String name, DistributedLock lock) {
        AtomicLong lowest = new AtomicLong(Long.MAX_VALUE);
        Eventually.await(PROMPTLY, "the watchdog renews '" + name + "'", () -> {
            long ttl = lock.remainTimeToLive();
            return ttl > lowest.accumulateAndGet(ttl, Math::min) + WATCHDOG.toMillis() / 10;
        });
    }

    // ---- helpers ------------------------------------------------------------------------------

    /** {@code ACL SETUSER relock reset on >password <key and channel rules> -@all +<each of RELOCK_COMMANDS>}. */
    private static void createUser(RedisServer server, String... keysAndChannels) {
        List<String> rule = new ArrayList<>(List.of("ACL", "SETUSER", USER, "reset", "on", ">" + PASSWORD));
        rule.addAll(List.of(keysAndChannels));
        rule.add("-@all");
        RELOCK_COMMANDS.forEach(command -> rule.add("+" + command));
        server.command(rule.toArray(String[]::new));
    }

    private RedisServer start(RedisServer.Builder builder) {
        RedisServer server = builder.start();
        servers.add(server);
        return server;
    }

    private Relock create(RelockConfig.Builder builder) {
        Relock relock = Relock.create(builder.commandTimeout(COMMAND_TIMEOUT).watchdogTimeout(WATCHDOG).build());
        relock.addLockListener(lost::add);
        opened.add(relock);
        return relock;
    }

    /** What the server answers to {@code ACL DRYRUN relock <command>}: OK, or why it would refuse it. */
    private static String dryRun(RedisServer server, String... command) {
        List<String> args = new ArrayList<>(List.of("ACL", "DRYRUN", USER));
        args.addAll(List.of(command));
        return String.valueOf(server.command(args.toArray(String[]::new)));
    }

    /** The CLIENT LIST lines of Relock's connections (named {@code relock:<clientId>}). */
    private static List<String> relockConnections(RedisServer server) {
        return String.valueOf(server.command("CLIENT", "LIST")).lines().filter(line -> line.contains(" name=relock:"))
                .toList();
    }

    /** Fails, listing them, if the server refused any command of the ACL user (scripts included). */
    private static void assertNoDenials(RedisServer server) {
        assertThat((List<?>) server.command("ACL", "LOG")).as("ACL LOG: commands refused to %s", USER).isEmpty();
    }

    /** How many failed logins ACL LOG holds (each entry counts repeats). */
    private static long authFailures(RedisServer server) {
        long failures = 0;
        for (Object entry : (List<?>) server.command("ACL", "LOG")) {
            List<?> fields = (List<?>) entry;
            if ("auth".equals(fields.get(fields.indexOf("reason") + 1))) {
                failures += (Long) fields.get(fields.indexOf("count") + 1);
            }
        }
        return failures;
    }

    /** How often the server ran {@code command} since it started, from INFO commandstats. */
    private static long calls(RedisServer server, String command) {
        String prefix = "cmdstat_" + command + ":calls=";
        return server.info("commandstats").lines().filter(line -> line.startsWith(prefix))
                .mapToLong(line -> Long.parseLong(line.substring(prefix.length(), line.indexOf(',', prefix.length()))))
                .findFirst().orElse(0);
    }

    /** An exception, its causes and their suppressed exceptions. */
    private static List<Throwable> causes(Throwable error) {
        List<Throwable> found = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Throwable> pending = new ArrayDeque<>(List.of(error));
        while (!pending.isEmpty()) {
            Throwable t = pending.removeFirst();
            if (seen.add(t)) {
                found.add(t);
                if (t.getCause() != null) {
                    pending.add(t.getCause());
                }
                pending.addAll(List.of(t.getSuppressed()));
            }
        }
        return found;
    }

    /** The class and message of an exception and of each of its {@link #causes}, one per line. */
    private static String messagesOf(Throwable error) {
        return causes(error).stream().map(Throwable::toString).collect(Collectors.joining("\n"));
    }

    /**
     * Runs {@code body} with standard error (where slf4j-simple logs, at WARN and above in these
     * tests) captured, and returns what was written, after copying it to the real stream.
     */
    private static String capturingStandardError(Runnable body) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(original);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        original.print(text);
        return text;
    }

    private static void assumeTls() {
        RedisBinary binary = RedisBinary.locate();
        assumeTrue(binary.supportsTls(), "the redis-server binary " + binary.path() + " (" + binary.version()
                + ") has no TLS support (not built with BUILD_TLS=yes), so rediss:// cannot be tested; point "
                + RedisBinary.ENV_VARIABLE + " at a redis-server built with TLS");
    }
}
