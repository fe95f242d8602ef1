package io.relock.cli;

import io.relock.ClientInfo;
import io.relock.LockInfo;
import java.util.List;

/**
 * What the commands show of one lock: read from Redis at one moment, possibly stale the next.
 *
 * @param name the lock's name, without the key prefix
 * @param key the Redis key
 * @param type the lock type recognised from the data
 * @param mode a read-write lock's {@code read} or {@code write}, else null
 * @param holders the holders, sorted by owner; empty when free
 * @param leaseMillis the lease left (PTTL): -2 free, -1 held without expiry
 * @param waitingClients client connections subscribed to the unlock channels, or -1 when not read
 * @param queue a fair lock's waiters in queue order (owner ids), else empty
 * @param fencingToken the last fencing token handed out, or null when the lock is not fenced
 * @param redisType the Redis type of the key ({@code none} when it does not exist)
 */
record LockView(String name, String key, LockInfo.Kind type, String mode, List<Holder> holders, long leaseMillis,
        long waitingClients, List<String> queue, Long fencingToken, String redisType) {

    LockView {
        holders = List.copyOf(holders);
        queue = List.copyOf(queue);
    }

    /** Whether anyone holds it. */
    boolean locked() {
        return !holders.isEmpty();
    }

    /**
     * One owner of the lock: a hash field {@code <clientId>:<threadId>} (a write holder's ends in
     * {@code :write}) or a simple lock's value.
     *
     * @param owner the field as stored
     * @param clientId the Relock or Redisson client's id
     * @param threadId the owning thread's id (negative for Relock's async owner ids)
     * @param holdCount how many times the owner holds it (re-entries)
     * @param client where the holder's client runs, when it is a registered Relock client; else null
     */
    record Holder(String owner, String clientId, long threadId, long holdCount, ClientInfo client) {}
}
