package io.relock.zookeeper.internal;

import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;

/** A read-write lock on ZooKeeper: {@code read} and {@code write} nodes in one queue under the lock's name. */
final class ZkReadWriteLock implements DistributedReadWriteLock {

    private final String name;
    private final DistributedLock readLock;
    private final DistributedLock writeLock;

    ZkReadWriteLock(String name, DistributedLock readLock, DistributedLock writeLock) {
        this.name = name;
        this.readLock = readLock;
        this.writeLock = writeLock;
    }

    @Override
    public DistributedLock readLock() {
        return readLock;
    }

    @Override
    public DistributedLock writeLock() {
        return writeLock;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public String toString() {
        return "ZooKeeperReadWriteLock{name='" + name + "'}";
    }
}
