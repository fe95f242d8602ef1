package io.relock.cli;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.relock.LockInfo;
import io.relock.RelockKeys;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a lock as relock-core's {@link io.relock.Relock#getLockInfo(String)} judges it: whether
 * the key holds a lock at all, its type, holders, lease and the holders' clients all come from
 * core's one rule (see {@link LockInfo.Kind}), the one its force-unlocks apply too. This class
 * adds only what the commands show besides: a fair lock's queue, a fenced lock's token, and the
 * queue of a Redisson fair lock, which core does not read (its keys lie outside the key prefix).
 * Those extra reads are separate commands, not one snapshot: a lock that changes meanwhile may
 * show a mix, which the next read corrects.
 */
final class LockReader {

    /** How core writes a holder: {@code <clientId>:<threadId>}, {@code :write} appended for a write holder. */
    private static final Pattern OWNER = Pattern.compile("(.+):(-?\\d+)(:write)?");

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

    /** Reads one lock without counting its waiting clients (used by {@code list}). */
    LockView read(String name) {
        return read(name, false);
    }

    /** Reads one lock with its waiting clients (used by {@code inspect} and {@code force-unlock}). */
    LockView inspect(String name) {
        return read(name, true);
    }

    private LockView read(String name, boolean withWaiters) {
        String key = key(name);
        LockInfo info = session.relock().getLockInfo(name);
        if (info.kind() == LockInfo.Kind.NOT_A_LOCK) {
            return new LockView(name, key, LockInfo.Kind.NOT_A_LOCK, null, List.of(), -2, -1, List.of(), null,
                    redis.type(key));
        }
        LockInfo.Kind type = info.kind();
        if ((type == LockInfo.Kind.REENTRANT || type == LockInfo.Kind.NONE) && hasRedissonQueue(key)) {
            type = LockInfo.Kind.FAIR;
        }
        List<LockView.Holder> holders = new ArrayList<>();
        boolean writer = false;
        for (Map.Entry<String, Long> entry : info.holders().entrySet()) {
            Matcher matcher = OWNER.matcher(entry.getKey());
            if (!matcher.matches()) {
                throw new IllegalStateException("relock-core reported holder '" + entry.getKey() + "' of lock '"
                        + name + "', which is not <clientId>:<threadId>");
            }
            writer |= matcher.group(3) != null;
            holders.add(new LockView.Holder(entry.getKey(), matcher.group(1), Long.parseLong(matcher.group(2)),
                    entry.getValue(), info.clientOf(entry.getKey()).orElse(null)));
        }
        holders.sort(Comparator.comparing(LockView.Holder::owner));
        String mode = type == LockInfo.Kind.READ_WRITE ? writer ? "write" : "read" : null;
        List<String> queue = type == LockInfo.Kind.FAIR ? queue(key) : List.of();
        Long token = type == LockInfo.Kind.FENCED ? token(key) : null;
        return new LockView(name, key, type, mode, holders, holders.isEmpty() ? -2 : info.remainTimeToLive(),
                withWaiters ? info.waitingClients() : -1, queue, token, info.isLocked() ? redisType(type) : "none");
    }

    /** The Redis type a held lock of {@code type} is stored as. */
    private static String redisType(LockInfo.Kind type) {
        return type == LockInfo.Kind.SIMPLE ? "string" : "hash";
    }

    /** Whether a fair lock in Redisson's layout has waiters: its queue keys lie outside the key prefix. */
    private boolean hasRedissonQueue(String key) {
        return redis.exists(redissonQueueKey(key), redissonTimeoutsKey(key)) > 0;
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

    // ---- key naming: relock-core's (RelockKeys) and Redisson's, for the same key --------------

    /** The key with a hash tag: itself if it contains a brace, else {@code {<key>}} (Redisson's rule). */
    static String hashTagged(String key) {
        return key.contains("{") ? key : "{" + key + "}";
    }

    static String queueKey(String key) {
        return RelockKeys.fairQueueKey(key);
    }

    static String tokenKey(String key) {
        return RelockKeys.fencingTokenKey(key);
    }

    static String redissonQueueKey(String key) {
        return "redisson_lock_queue:" + hashTagged(key);
    }

    static String redissonTimeoutsKey(String key) {
        return "redisson_lock_timeout:" + hashTagged(key);
    }

    /** The unlock channels waiters subscribe to: the lock's, and a read-write lock's. */
    static String channel(String key, LockInfo.Kind type) {
        return (type == LockInfo.Kind.READ_WRITE ? "redisson_rwlock:" : "redisson_lock__channel:") + hashTagged(key);
    }
}
