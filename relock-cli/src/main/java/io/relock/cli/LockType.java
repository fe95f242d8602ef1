package io.relock.cli;

/**
 * The kinds of lock the commands tell apart: relock-core's {@link io.relock.LockInfo.Kind}, told
 * by its rule from the data on Redis, and a Redisson fair lock's queue, which core does not read.
 */
enum LockType {
    /** A hash of {@code <clientId>:<threadId>} hold counts (Relock's and Redisson's reentrant and spin locks). */
    REENTRANT("reentrant"),
    /** A hash with a {@code mode} field (Redisson's {@code RReadWriteLock} layout). */
    READ_WRITE("read-write"),
    /** A reentrant hash with a waiter queue (Relock's {@code {name}:queue} or Redisson's {@code redisson_lock_queue:{name}}). */
    FAIR("fair"),
    /** A reentrant hash with a fencing token key {@code {name}:token}. */
    FENCED("fenced"),
    /** A string holding its owner's {@code <clientId>:<threadId>} (Relock's simple lock). */
    SIMPLE("simple"),
    /** Nothing on Redis under this name. */
    NONE("none"),
    /** A key that holds data that no lock writes ({@link io.relock.LockInfo.Kind#NOT_A_LOCK}). */
    NOT_A_LOCK("not a lock");

    private final String label;

    LockType(String label) {
        this.label = label;
    }

    /** How the commands print it. */
    String label() {
        return label;
    }
}
