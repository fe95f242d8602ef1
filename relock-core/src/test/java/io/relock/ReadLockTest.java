package io.relock;

/**
 * The contract suite on the read half of {@link Relock#getReadWriteLock}: a shared lock, which
 * the write lock of the same name excludes and waits for.
 */
class ReadLockTest extends LockTypeContractTest {

    ReadLockTest() {
        super(LockType.READ);
    }
}
