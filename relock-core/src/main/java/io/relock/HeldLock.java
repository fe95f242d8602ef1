package io.relock;

import java.time.Instant;
import java.util.Objects;

/**
 * One lock this client holds, from {@link Relock#heldLocks()}: what the client itself knows,
 * without asking Redis.
 *
 * @param name the lock's name
 * @param type the lock's type: {@code reentrant}, {@code fair}, {@code fenced}, {@code spin},
 *     {@code simple}, {@code read} or {@code write}
 * @param ownerId the thread id (or async owner id) that holds it
 * @param ownerThreadName the name of the thread that took the first hold, when it acquired for
 *     itself; {@code null} for an async owner id
 * @param holdCount how often the owner holds it (re-entries count)
 * @param heldSince when the first hold was taken, by this machine's clock
 * @param leaseLeftMillis how much of the lease is left by this client's last renewal or acquire
 *     (Redis may count a few milliseconds less); never negative
 * @param watchdog whether the watchdog renews it ({@code false}: a fixed lease that ends by itself)
 */
public record HeldLock(String name, String type, long ownerId, String ownerThreadName, int holdCount,
        Instant heldSince, long leaseLeftMillis, boolean watchdog) {

    /**
     * Creates a snapshot of one hold.
     *
     * @param name the lock's name
     * @param type the lock's type
     * @param ownerId the owner
     * @param ownerThreadName the owner thread's name, or {@code null}
     * @param holdCount the hold count
     * @param heldSince when the first hold was taken
     * @param leaseLeftMillis the lease left in milliseconds
     * @param watchdog whether the watchdog renews it
     * @throws NullPointerException if {@code name}, {@code type} or {@code heldSince} is null
     */
    public HeldLock {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(heldSince, "heldSince must not be null");
    }
}
