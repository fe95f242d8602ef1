package io.relock;

/** The contract suite on {@link Relock#getLock(String)}. */
class ReentrantLockTest extends LockContractTest {

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return client.getLock(name);
    }
}
