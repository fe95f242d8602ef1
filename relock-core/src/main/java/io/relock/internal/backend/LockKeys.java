package io.relock.internal.backend;

import io.relock.internal.support.Args;

/**
 * The names one lock uses on Redis: its key (the name after the key prefix), its unlock channel,
 * and the keys of its layout, all in the key's Cluster slot. Naming lives here only, so every
 * lock type, the watchdog, the inspector and {@link io.relock.RelockKeys} name alike.
 *
 * @param name the lock's name as the caller gave it
 * @param key the Redis key
 * @param channel the channel its releases are announced on
 */
public record LockKeys(String name, String key, String channel) {

    /** Prefix of the unlock channel of reentrant, fenced, simple and spin locks (Redisson's name). */
    public static final String LOCK_CHANNEL_PREFIX = "redisson_lock__channel";
    /** Prefix of the unlock channel of read-write locks (Redisson's name). */
    public static final String RW_CHANNEL_PREFIX = "redisson_rwlock";

    /**
     * The keys of lock {@code name}, stored under {@code keyPrefix} on the servers {@code gateway}
     * reaches, announcing on channels named {@code channelPrefix}; checks the name, and refuses
     * one whose channel would fall into another Cluster slot.
     */
    public static LockKeys of(String keyPrefix, RenewalGateway gateway, String name, String channelPrefix) {
        Args.lockName(name);
        String key = keyPrefix + name;
        String channel = channelPrefix + ":" + hashTagged(key);
        if (gateway.slotOf(key) != gateway.slotOf(channel)) {
            throw new IllegalArgumentException("name '" + name + "' has braces but no hash tag: in a Redis Cluster "
                    + "the lock's channel and keys would fall into different slots; give it a tag such as '{"
                    + name.replace("{", "").replace("}", "") + "}' or no braces at all");
        }
        return new LockKeys(name, key, channel);
    }

    /**
     * The key with a hash tag, so that everything named after it shares its Cluster slot: the
     * key itself if it contains a brace (it brings its own tag), else {@code {<key>}}. This is
     * Redisson's rule, so both name their channels and auxiliary keys alike.
     */
    public static String hashTagged(String key) {
        return key.contains("{") ? key : "{" + key + "}";
    }

    /** This lock's key with a hash tag (see {@link #hashTagged(String)}). */
    public String hashTagged() {
        return hashTagged(key);
    }

    /**
     * A key in Redisson's naming for keys that belong to a lock: {@code {<key>}:<suffix>}, or
     * {@code <key>:<suffix>} when the key contains a brace. Redisson names {@code x} and
     * {@code {x}} alike there, so only Redisson's own layouts (the read-write lock) use it.
     */
    public String auxiliaryKey(String suffix) {
        return hashTagged() + ":" + suffix;
    }

    /**
     * A key of a Relock-only layout that belongs to this lock: in its Cluster slot, and distinct
     * for distinct lock keys (see {@link #ownKey(String, String)}).
     */
    public String ownKey(String suffix) {
        return ownKey(key, suffix);
    }

    /**
     * {@code {<key>}:<suffix>} for a key without a hash tag, and {@code <key>::<suffix>} for one
     * with a tag: the two forms end differently, so lock {@code x} and lock {@code {x}} get
     * different keys. Also how {@link io.relock.RelockKeys} names these keys for tools, and how
     * {@code lock_rule.lua} names the note a force-release leaves ({@code relock:forced}).
     */
    public static String ownKey(String key, String suffix) {
        return hasHashTag(key) ? key + "::" + suffix : "{" + key + "}:" + suffix;
    }

    /** Whether Redis Cluster hashes {@code key} by a tag: a '{' followed later by '}' with something between. */
    public static boolean hasHashTag(String key) {
        int open = key.indexOf('{');
        if (open < 0) {
            return false;
        }
        int close = key.indexOf('}', open + 1);
        return close > open + 1;
    }
}
