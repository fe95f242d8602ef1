package io.relock;

/** The contract suite on the write half of {@link Relock#getReadWriteLock}: an exclusive lock. */
class WriteLockTest extends LockTypeContractTest {

    WriteLockTest() {
        super(LockType.WRITE);
    }
}
