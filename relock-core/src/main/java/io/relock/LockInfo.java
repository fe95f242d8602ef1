package io.relock;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

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
 * @param clients where each holder's client runs, by client id, for the Relock clients among
 *     the holders that are registered (see {@link ClientInfo}); Redisson holders have none
 */
public record LockInfo(String name, Map<String, Long> holders, long remainTimeToLive, long waitingClients,
        Map<String, ClientInfo> clients) {

    /**
     * Creates a snapshot; {@code holders} is copied.
     *
     * @param name the lock's name
     * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count; empty when free
     * @param remainTimeToLive the lease left in milliseconds; {@code -2} when the lock is free,
     *     {@code -1} when it is held without expiry
     * @param waitingClients how many client connections are subscribed to the lock's unlock channel
     * @param clients where the holders' clients run, by client id; copied
     * @throws NullPointerException if {@code name}, {@code holders} or {@code clients} is null
     */
    public LockInfo {
        Objects.requireNonNull(name, "name must not be null");
        holders = Map.copyOf(holders);
        clients = Map.copyOf(clients);
    }

    /**
     * Creates a snapshot without client descriptions.
     *
     * @param name the lock's name
     * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count
     * @param remainTimeToLive the lease left in milliseconds, {@code -2} free, {@code -1} no expiry
     * @param waitingClients how many client connections are subscribed to the lock's unlock channel
     * @throws NullPointerException if {@code name} or {@code holders} is null
     */
    public LockInfo(String name, Map<String, Long> holders, long remainTimeToLive, long waitingClients) {
        this(name, holders, remainTimeToLive, waitingClients, Map.of());
    }

    /**
     * Where the client of one holder runs.
     *
     * @param holder a key of {@link #holders()} ({@code <clientId>:<threadId>}, or with a suffix such as {@code :write})
     * @return its client's description, or empty if the client is not a registered Relock client
     * @throws NullPointerException if {@code holder} is null
     */
    public Optional<ClientInfo> clientOf(String holder) {
        Objects.requireNonNull(holder, "holder must not be null");
        int colon = holder.indexOf(':');
        return Optional.ofNullable(clients.get(colon < 0 ? holder : holder.substring(0, colon)));
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
