package io.relock.cli;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.relock.LockInfo;
import io.relock.internal.LockKeys;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Recognises a lock's type from its data, with the key naming of relock-core's lock types and
 * of Redisson's (see DESIGN.md, "On Redis"). Reads are separate commands, not one snapshot: a
 * lock that changes meanwhile may show a mix, which the next read corrects.
 */
final class LockReader {

    /** A holder field: {@code <clientId>:<threadId>}, {@code :write} appended for a write holder. */
    private static final Pattern OWNER = Pattern.compile("(.+):(-?\\d+)(:write)?");
    private static final String MODE_FIELD = "mode";
    /** The reentrant lock's hand-off bookkeeping in its hash ({@code relock:queued}, {@code relock:granted}). */
    private static final String HANDOFF_FIELD_PREFIX = "relock:";

    private final Session session;
    private final RedisClusterCommands<String, String> redis;

    LockReader(Session session) {
        this.session = session;
        this.redis = session.commands();
    }

    /** The Redis key of a lock name. */
    String key(String name) {
        return session.keyPrefix() + name;
    }

    /** The lock name of a Redis key, or null when the key lacks the configured prefix. */
    String nameOf(String key) {
        return key.startsWith(session.keyPrefix()) ? key.substring(session.keyPrefix().length()) : null;
    }

    /**
     * Reads one lock from the data alone, without the waiting clients (used by {@code list}).
     */
    LockView read(String name) {
        String key = key(name);
        String redisType = redis.type(key);
        List<LockView.Holder> holders = new ArrayList<>();
        String mode = null;
        LockType type;
        switch (redisType) {
            case "hash" -> {
                Map<String, String> fields = redis.hgetall(key);
                mode = fields.get(MODE_FIELD);
                type = holdersOf(fields, holders) ? hashType(key, mode) : LockType.NOT_A_LOCK;
            }
            case "string" -> {
                String value = redis.get(key);
                LockView.Holder holder = value == null ? null : holder(value, "1");
                if (holder != null) {
                    holders.add(holder);
                }
                type = value == null ? LockType.NONE : holder == null ? LockType.NOT_A_LOCK : LockType.SIMPLE;
            }
            case "none" -> type = freeType(key);
            default -> type = LockType.NOT_A_LOCK;
        }
        if (type == LockType.NOT_A_LOCK) {
            return new LockView(name, key, type, null, List.of(), -2, -1, List.of(), null, redisType);
        }
        long lease = holders.isEmpty() ? -2 : redis.pttl(key);
        List<String> queue = type == LockType.FAIR ? queue(key) : List.of();
        Long token = type == LockType.FENCED ? token(key) : null;
        return new LockView(name, key, type, mode, holders, lease, -1, queue, token, redisType);
    }

    /**
     * Reads one lock for {@code inspect}: its type from the data, and holders, lease and waiting
     * clients from relock-core's {@link io.relock.Relock#getLockInfo(String)} (which counts the
     * subscribers with sharded pub/sub in a cluster, as its locks publish there).
     */
    LockView inspect(String name) {
        LockView data = read(name);
        if (data.type() == LockType.NOT_A_LOCK) {
            return data;
        }
        LockInfo info = session.relock().getLockInfo(name);
        List<LockView.Holder> holders = new ArrayList<>();
        for (Map.Entry<String, Long> entry : info.holders().entrySet()) {
            LockView.Holder holder = holder(entry.getKey(), Long.toString(entry.getValue()));
            if (holder == null) {
                holder = new LockView.Holder(entry.getKey(), "?", 0, entry.getValue(), null);
            }
            holders.add(holder.runningAt(info.clientOf(entry.getKey()).orElse(null)));
        }
        holders.sort(Comparator.comparing(LockView.Holder::owner));
        return data.with(holders, info.remainTimeToLive(), info.waitingClients());
    }

    /** The holders among the fields; false when a field is one that no lock writes. */
    private static boolean holdersOf(Map<String, String> fields, List<LockView.Holder> holders) {
        for (Map.Entry<String, String> field : fields.entrySet()) {
            if (field.getKey().startsWith(HANDOFF_FIELD_PREFIX)) {
                continue;
            }
            if (field.getKey().equals(MODE_FIELD)) {
                if (!field.getValue().equals("read") && !field.getValue().equals("write")) {
                    return false;
                }
                continue;
            }
            LockView.Holder holder = holder(field.getKey(), field.getValue());
            if (holder == null) {
                return false;
            }
            holders.add(holder);
        }
        holders.sort(Comparator.comparing(LockView.Holder::owner));
        return !holders.isEmpty();
    }

    /** A holder from a field and its count, or null when they do not look like one. */
    private static LockView.Holder holder(String owner, String count) {
        Matcher matcher = OWNER.matcher(owner);
        if (!matcher.matches()) {
            return null;
        }
        try {
            return new LockView.Holder(owner, matcher.group(1), Long.parseLong(matcher.group(2)),
                    Long.parseLong(count), null);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private LockType hashType(String key, String mode) {
        if (mode != null) {
            return LockType.READ_WRITE;
        }
        if (hasQueue(key)) {
            return LockType.FAIR;
        }
        return redis.exists(tokenKey(key)) > 0 ? LockType.FENCED : LockType.REENTRANT;
    }

    /** A free lock leaves a trace only as a fair lock's waiters or a fenced lock's token. */
    private LockType freeType(String key) {
        if (hasQueue(key)) {
            return LockType.FAIR;
        }
        return redis.exists(tokenKey(key)) > 0 ? LockType.FENCED : LockType.NONE;
    }

    private boolean hasQueue(String key) {
        return redis.exists(queueKey(key), redissonQueueKey(key), timeoutsKey(key), redissonTimeoutsKey(key)) > 0;
    }

    private List<String> queue(String key) {
        List<String> relock = redis.lrange(queueKey(key), 0, -1);
        return relock.isEmpty() ? redis.lrange(redissonQueueKey(key), 0, -1) : relock;
    }

    private Long token(String key) {
        String token = redis.get(tokenKey(key));
        try {
            return token == null ? null : Long.valueOf(token);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The first waiter of a fair lock in Redisson's layout, or null (Relock's own is served by relock-core). */
    String redissonQueueHead(String key) {
        return redis.lindex(redissonQueueKey(key), 0);
    }

    /** Redisson's per-waiter channel of a fair lock: the unlock channel, then the waiter's id. */
    static String fairWaiterChannel(String key, String waiter) {
        return "redisson_lock__channel:" + hashTagged(key) + ":" + waiter;
    }

    // ---- key naming: relock-core's LockKeys and Redisson's, for the same key ------------------

    /** The key with a hash tag: itself if it contains a brace, else {@code {<key>}} (Redisson's rule). */
    static String hashTagged(String key) {
        return key.contains("{") ? key : "{" + key + "}";
    }

    /** relock-core's own auxiliary keys, named by core's own rule. */
    static String ownKey(String key, String suffix) {
        return LockKeys.ownKey(key, suffix);
    }

    static String queueKey(String key) {
        return ownKey(key, "queue");
    }

    static String timeoutsKey(String key) {
        return ownKey(key, "timeouts");
    }

    static String tokenKey(String key) {
        return ownKey(key, "token");
    }

    static String redissonQueueKey(String key) {
        return "redisson_lock_queue:" + hashTagged(key);
    }

    static String redissonTimeoutsKey(String key) {
        return "redisson_lock_timeout:" + hashTagged(key);
    }

    /** The unlock channels waiters subscribe to: the lock's, and a read-write lock's. */
    static String channel(String key, LockType type) {
        return (type == LockType.READ_WRITE ? "redisson_rwlock:" : "redisson_lock__channel:") + hashTagged(key);
    }
}
