package io.relock.internal.redis;

import io.relock.internal.backend.Grants;
import io.relock.internal.backend.Renewal;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script shipped as a resource under {@code io/relock/internal/scripts/}. Its SHA-1 is
 * computed here, so EVALSHA needs no round trip to learn it. Scripts that share Lua functions get
 * the shared file's text (the prelude) put before their own, since a script cannot call another on
 * the server; or in place of their line {@code --@prelude}, so that a fast path above that
 * line returns before the prelude defines its functions (each run of a script defines them anew).
 *
 * <p>Arguments to {@code redis.call} in the scripts are strings, never Lua numbers: Redis turns a
 * number into text with {@code snprintf} at every call.
 */
public enum Script implements Renewal {
    LOCK_ACQUIRE("lock_acquire", null, Arguments.TRAILING_ZEROS_OPTIONAL),
    LOCK_RELEASE("lock_release", "grant", Arguments.TRAILING_ZEROS_OPTIONAL),
    LOCK_ROLLBACK("lock_rollback", "grant"),
    LOCK_LEAVE("lock_leave", "grant"),
    LOCK_HAND_OVER("lock_hand_over"),
    LOCK_FORCE_RELEASE("lock_force_release", "lock_rule"),
    LOCK_RENEW("lock_renew", "lock_rule"),
    LOCK_KEEP("lock_keep", "lock_rule"),
    FENCED_ACQUIRE("fenced_acquire"),
    FENCED_TOKEN("fenced_token"),
    SIMPLE_ACQUIRE("simple_acquire"),
    SIMPLE_RELEASE("simple_release"),
    SIMPLE_RENEW("simple_renew", "lock_rule"),
    LOCK_INFO("lock_info", "lock_rule"),
    RW_READ_ACQUIRE("rw_read_acquire"),
    RW_READ_RELEASE("rw_read_release"),
    RW_READ_RENEW("rw_read_renew", "lock_rule"),
    RW_WRITE_ACQUIRE("rw_write_acquire"),
    RW_WRITE_RELEASE("rw_write_release"),
    RW_FORCE_RELEASE("rw_force_release", "lock_rule"),
    FAIR_ACQUIRE("fair_acquire"),
    FAIR_RELEASE("fair_release"),
    FAIR_LEAVE("fair_leave"),
    FAIR_FORCE_RELEASE("fair_force_release", "lock_rule");

    /** What a script expects of its arguments (before the repeat flag, see {@link RedisGateway}). */
    enum Arguments {
        /** All of them, always. */
        FIXED,
        /**
         * Its trailing {@code '0'} arguments may be left out: the script reads a missing one as
         * {@code '0'}. The scripts of an uncontended lock and unlock are, so their arguments are
         * ordered with the ones that are usually {@code '0'} last.
         */
        TRAILING_ZEROS_OPTIONAL
    }

    /** The line of a script's own text that its prelude replaces. */
    private static final String PRELUDE_LINE = "--@prelude";

    /**
     * How long a grant lasts until its waiter claims it: what a dead next waiter costs. The one
     * place it is written: {@code grant.lua} reads it as {@value #GRANT_LEASE_PLACEHOLDER}, put
     * in its text when the script is loaded, and the engine waits by it.
     */
    public static final long GRANT_LEASE_MILLIS = Grants.LEASE_MILLIS;
    private static final String GRANT_LEASE_PLACEHOLDER = "@GRANT_LEASE_MILLIS@";

    private final Arguments arguments;
    private final String source;
    private final String sha;
    private final String shardedSource;
    private final String shardedSha;

    Script(String name) {
        this(name, null);
    }

    /** A script that uses the functions of {@code prelude}, whose text is put before its own or at its prelude line. */
    Script(String name, String prelude) {
        this(name, prelude, Arguments.FIXED);
    }

    Script(String name, String prelude, Arguments arguments) {
        this.arguments = arguments;
        this.source = (prelude == null ? load(name) : withPrelude(load(name), load(prelude)))
                .replace(GRANT_LEASE_PLACEHOLDER, Long.toString(GRANT_LEASE_MILLIS));
        this.sha = sha1(source);
        // Cluster on Redis 7+: the same script announcing releases with sharded pub/sub.
        this.shardedSource = source.replace("redis.call('publish',", "redis.call('spublish',")
                .replace("redis.call('pubsub', 'numsub',", "redis.call('pubsub', 'shardnumsub',");
        this.shardedSha = sha1(shardedSource);
    }

    /** Whether the script reads a missing trailing argument as {@code '0'}, see {@link Arguments}. */
    public boolean takesFewerArguments() {
        return arguments == Arguments.TRAILING_ZEROS_OPTIONAL;
    }

    public String source() {
        return source;
    }

    public String sha() {
        return sha;
    }

    /** The source, with SPUBLISH and PUBSUB SHARDNUMSUB instead of PUBLISH and PUBSUB NUMSUB when {@code sharded}. */
    public String source(boolean sharded) {
        return sharded ? shardedSource : source;
    }

    /** The SHA-1 of {@link #source(boolean)}. */
    public String sha(boolean sharded) {
        return sharded ? shardedSha : sha;
    }

    private static String withPrelude(String own, String prelude) {
        String line = PRELUDE_LINE + "\n";
        int at = own.indexOf(line);
        if (at < 0) {
            return prelude + "\n" + own;
        }
        return own.substring(0, at) + prelude + "\n" + own.substring(at + line.length());
    }

    private static String load(String name) {
        String path = "scripts/" + name + ".lua";
        try (InputStream in = Script.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + path, e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JDK", e);
        }
    }
}
