package io.relock;

import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of one lock as Redis sees it, from {@link Relock#getLockInfo(String)}: who holds
 * it, how often each holder re-entered it, how long its lease has left, and how many clients
 * are subscribed waiting for its release. The values are read in one pipelined batch; they can
 * be stale by the time the caller looks at them.
 *
 * @param name the lock's name
 * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count; empty when free
 * @param remainTimeToLive the lease left in milliseconds; {@code -2} when the lock is free,
 *     {@code -1} when it is held without expiry
 * @param waitingClients how many client connections are subscribed to the lock's unlock channel
 *     (each Relock or Redisson client counts once however many of its threads wait)
 */
public record LockInfo(String name, Map<String, Long> holders, long remainTimeToLive, long waitingClients) {

    /**
     * Creates a snapshot; {@code holders} is copied.
     *
     * @param name the lock's name
     * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count; empty when free
     * @param remainTimeToLive the lease left in milliseconds; {@code -2} when the lock is free,
     *     {@code -1} when it is held without expiry
     * @param waitingClients how many client connections are subscribed to the lock's unlock channel
     * @throws NullPointerException if {@code name} or {@code holders} is null
     */
    public LockInfo {
        Objects.requireNonNull(name, "name must not be null");
        holders = Map.copyOf(holders);
    }

    /**
     * Whether anyone held the lock when the snapshot was taken.
     *
     * @return {@code true} if there was at least one holder
     */
    public boolean isLocked() {
        return !holders.isEmpty();
    }
}
