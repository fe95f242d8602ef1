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
 *     (each Relock or Redisson client counts once however many of its threads wait; a Relock
 *     client whose waiter won the lock stays subscribed while it holds the lock and 100 ms
 *     after, and counts too)
 * @param clients where each holder's client runs, by client id, for the Relock clients among
 *     the holders that are registered (see {@link ClientInfo}); Redisson holders have none
 * @param kind which lock type the data under the name belongs to, told from the data itself;
 *     {@link Kind#NOT_A_LOCK} (with no holders and a {@code remainTimeToLive} of {@code -2}, as
 *     for a free lock) when it is data that no lock writes
 */
public record LockInfo(String name, Map<String, Long> holders, long remainTimeToLive, long waitingClients,
        Map<String, ClientInfo> clients, Kind kind) {

    /**
     * The lock type that wrote the data under a name, as far as the data tells: Relock's and
     * Redisson's layouts are the same, so a reentrant, spin or multi-lock member all read as
     * {@link #REENTRANT}.
     *
     * <p>One rule, the same for this snapshot and for every force-unlock, says what a lock is. A
     * holder is {@code <clientId>:<threadId>} (a write holder's with {@code :write} appended),
     * the client id a UUID as Relock and Redisson write it, with a positive whole hold count. A
     * lock hash holds at least one holder and besides holders only {@code mode}
     * ({@code read}/{@code write}) and Relock's {@code relock:*} fields holding whole numbers. A
     * simple lock is a string holding one holder's {@code <clientId>:<threadId>} with a lease.
     * A fair lock's queue ({@code {name}:queue}, a list, or {@code {name}:timeouts}, a sorted
     * set) counts when its first entry is a holder, a fenced lock's token ({@code {name}:token})
     * when it is a string holding a whole number. Anything else is {@link #NOT_A_LOCK}.
     */
    public enum Kind {
        /** A hash of holders: {@code getLock}, {@code getSpinLock}, Redisson's {@code RLock}. */
        REENTRANT("reentrant"),
        /** A hash of holders with a {@code mode} field: {@code getReadWriteLock}. */
        READ_WRITE("read-write"),
        /**
         * A hash of holders (or nothing) with a waiter queue: {@code getFairLock}. A fair lock
         * that nobody waits for has no queue and reads as {@link #REENTRANT}; with no waiters to
         * wake, removing it as one is the same. Redisson's fair lock keeps its queue outside the
         * key prefix and reads as {@link #REENTRANT}.
         */
        FAIR("fair"),
        /** A hash of holders (or nothing) with a fencing token key: {@code getFencedLock}. */
        FENCED("fenced"),
        /** A string holding the owner's token: {@code getSimpleLock}. */
        SIMPLE("simple"),
        /** Nothing under the name: free, and no lock left a trace. */
        NONE("none"),
        /**
         * The key holds data that no lock type writes: another Redis type, a hash with a field
         * or count no lock writes (a counter hash), a string that is not a simple lock's token
         * with a lease. No force-unlock removes it.
         */
        NOT_A_LOCK("not a lock");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /**
         * The kind's name for people, as relock-cli and the Actuator endpoint print it:
         * {@code reentrant}, {@code read-write}, {@code fair}, {@code fenced}, {@code simple},
         * {@code none}, or {@code not a lock}. For a lock type it is also the name Relock's
         * lock-inspecting script reports the type by. Never null; never fails.
         *
         * @return the label
         */
        public String label() {
            return label;
        }
    }

    /**
     * Creates a snapshot; {@code holders} is copied.
     *
     * @param name the lock's name
     * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count; empty when free
     * @param remainTimeToLive the lease left in milliseconds; {@code -2} when the lock is free,
     *     {@code -1} when it is held without expiry
     * @param waitingClients how many client connections are subscribed to the lock's unlock channel
     * @param clients where the holders' clients run, by client id; copied
     * @param kind the lock type the data belongs to
     * @throws NullPointerException if any argument is null
     */
    public LockInfo {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(kind, "kind must not be null");
        holders = Map.copyOf(holders);
        clients = Map.copyOf(clients);
    }

    /**
     * Creates a snapshot of a reentrant lock (or of nothing, without holders), without client
     * descriptions.
     *
     * @param name the lock's name
     * @param holders each holder ({@code <clientId>:<threadId>}) and its hold count
     * @param remainTimeToLive the lease left in milliseconds, {@code -2} free, {@code -1} no expiry
     * @param waitingClients how many client connections are subscribed to the lock's unlock channel
     * @throws NullPointerException if {@code name} or {@code holders} is null
     */
    public LockInfo(String name, Map<String, Long> holders, long remainTimeToLive, long waitingClients) {
        this(name, holders, remainTimeToLive, waitingClients, Map.of(),
                holders.isEmpty() ? Kind.NONE : Kind.REENTRANT);
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
