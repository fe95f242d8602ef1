package io.relock;

import io.relock.internal.backend.LockKeys;
import java.util.Objects;

/**
 * The Redis keys Relock keeps next to a lock's own key, for tools that read a lock's data
 * directly (relock-cli does; {@link Relock#getLockInfo(String)} reads the same keys). They share
 * the lock key's Cluster slot: {@code {<key>}:<suffix>} for a key without a hash tag, and
 * {@code <key>::<suffix>} for a key with one (a {@code '{'} followed later by a {@code '}'}
 * with something between), so that lock {@code x} and lock {@code {x}} never share them.
 *
 * <p>A lock key is the lock's name after the configured {@link RelockConfig#keyPrefix()}. These
 * names are part of Relock's data layout on Redis and change only with it. Redisson's own
 * auxiliary keys (its fair lock's queue, for one) are named otherwise and are not given here.
 */
public final class RelockKeys {

    private RelockKeys() {}

    /**
     * The waiter queue of a fair lock ({@link Relock#getFairLock(String)}): a list of the
     * waiting owners' {@code <clientId>:<threadId>}, first in line first; absent while nobody
     * waits.
     *
     * @param lockKey the lock's Redis key (the key prefix and the name)
     * @return the queue's key
     * @throws NullPointerException if {@code lockKey} is null
     */
    public static String fairQueueKey(String lockKey) {
        return LockKeys.ownKey(Objects.requireNonNull(lockKey, "lockKey must not be null"), "queue");
    }

    /**
     * The fencing-token counter of a fenced lock ({@link Relock#getFencedLock(String)}): a
     * string holding the last token handed out. It never expires and outlives every holder.
     *
     * @param lockKey the lock's Redis key (the key prefix and the name)
     * @return the counter's key
     * @throws NullPointerException if {@code lockKey} is null
     */
    public static String fencingTokenKey(String lockKey) {
        return LockKeys.ownKey(Objects.requireNonNull(lockKey, "lockKey must not be null"), "token");
    }
}
