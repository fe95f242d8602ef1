package io.relock;

import io.relock.testkit.Eventually;

/** The contract suite on one {@link LockType}; subclasses choose the type and the topology. */
abstract class LockTypeContractTest extends LockContractTest {

    private final LockType type;

    LockTypeContractTest(LockType type) {
        this.type = type;
    }

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return type.newLock(client, name);
    }

    @Override
    protected DistributedLock newRival(Relock client, String name) {
        return type.newRival(client, name);
    }

    @Override
    protected boolean reentrant() {
        return type.reentrant();
    }

    @Override
    protected boolean exclusive() {
        return type.exclusive();
    }

    @Override
    protected void awaitWaiting(String name) {
        switch (type.waiting()) {
            case SUBSCRIBED -> awaitSubscribed(name);
            case QUEUED -> awaitQueueLength(name, 1);
            case RETRYING -> awaitRetries(name);
        }
    }

    /** Returns once at least {@code length} waiters are in the fair lock's queue. */
    protected void awaitQueueLength(String name, long length) {
        String queue = "{" + name + "}:queue";
        Eventually.await(PROMPTLY, length + " waiters queued on '" + name + "'",
                () -> ((Long) backend.masterFor(queue).command("LLEN", queue)) >= length);
    }
}
