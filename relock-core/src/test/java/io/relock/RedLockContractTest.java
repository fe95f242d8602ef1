package io.relock;

import java.time.Duration;

/**
 * The contract suite on {@link Relock#getRedLock}, with three members from three clients. They
 * share one server here (under different names), which exercises the protocol; independent
 * masters and their failures are {@link RedLockTest}'s subject.
 */
class RedLockContractTest extends LockContractTest {

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        // Every member's client has the given one's watchdog timeout: a lease of -1 is then the
        // same lease on every member, and the watchdog test sees each of them renewed.
        Duration watchdog = client.config().watchdogTimeout();
        return client.getRedLock(client.getLock(name + ":1"), clients.create(watchdog).getLock(name + ":2"),
                clients.create(watchdog).getLock(name + ":3"));
    }

    /** RedLock waits by retrying rounds after random pauses, not by subscribing. */
    @Override
    protected void awaitWaiting(String name) {
        awaitRetries(name);
    }
}
