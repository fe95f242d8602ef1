package io.relock;

import java.util.function.BiFunction;

/**
 * The lock types that the contract suite covers on every topology, with what the suite needs to
 * know about each: how to get one, whether it is reentrant and exclusive, what excludes it, and
 * how a waiter shows on Redis. Multi-lock and RedLock are composites with their own suites.
 */
enum LockType {

    REENTRANT(Relock::getLock, Waiting.SUBSCRIBED),
    FAIR(Relock::getFairLock, Waiting.QUEUED),
    FENCED(Relock::getFencedLock, Waiting.SUBSCRIBED),
    SPIN(Relock::getSpinLock, Waiting.RETRYING),
    SIMPLE(Relock::getSimpleLock, Waiting.SUBSCRIBED) {
        @Override
        boolean reentrant() {
            return false;
        }
    },
    /** Shared among readers: the suite's rival is the write lock of the same name. */
    READ((client, name) -> client.getReadWriteLock(name).readLock(), Waiting.SUBSCRIBED) {
        @Override
        boolean exclusive() {
            return false;
        }

        @Override
        DistributedLock newRival(Relock client, String name) {
            return client.getReadWriteLock(name).writeLock();
        }
    },
    WRITE((client, name) -> client.getReadWriteLock(name).writeLock(), Waiting.SUBSCRIBED);

    /** How Redis shows that a client waits for a lock of this type. */
    enum Waiting {
        /** Subscribed to the lock's unlock channel. */
        SUBSCRIBED,
        /** In the fair lock's waiter queue {@code {<name>}:queue}. */
        QUEUED,
        /** Not at all, apart from its repeated attempts (scripts run on the master). */
        RETRYING
    }

    private final BiFunction<Relock, String, DistributedLock> factory;
    private final Waiting waiting;

    LockType(BiFunction<Relock, String, DistributedLock> factory, Waiting waiting) {
        this.factory = factory;
        this.waiting = waiting;
    }

    DistributedLock newLock(Relock client, String name) {
        return factory.apply(client, name);
    }

    /**
     * A lock on the same name that another owner cannot hold while one holds a lock of this type,
     * nor acquire it while one holds this: for an exclusive type, another lock of the type.
     */
    DistributedLock newRival(Relock client, String name) {
        return newLock(client, name);
    }

    /** Whether the owner may acquire the lock again while holding it. */
    boolean reentrant() {
        return true;
    }

    /** Whether two owners exclude each other on a lock of this type. */
    boolean exclusive() {
        return true;
    }

    Waiting waiting() {
        return waiting;
    }
}
