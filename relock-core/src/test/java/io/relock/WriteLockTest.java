package io.relock;

/** The contract suite on the write half of {@link Relock#getReadWriteLock}: an exclusive lock. */
class WriteLockTest extends LockContractTest {

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return client.getReadWriteLock(name).writeLock();
    }
}
