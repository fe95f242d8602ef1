package io.relock;

/** The contract suite on {@link Relock#getLock(String)}. */
class ReentrantLockTest extends LockTypeContractTest {

    ReentrantLockTest() {
        super(LockType.REENTRANT);
    }
}
