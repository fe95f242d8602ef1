package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The contract suite on {@link Relock#getSimpleLock(String)}, which is not reentrant. */
class SimpleLockTest extends LockTypeContractTest {

    SimpleLockTest() {
        super(LockType.SIMPLE);
    }

    @Test
    void itIsAStringKeyHoldingTheOwnersTokenWithALease() {
        Relock relock = clients.create();
        DistributedLock lock = relock.getSimpleLock("plain");
        lock.lock();
        assertThat(server.command("TYPE", "plain")).isEqualTo("string");
        assertThat(server.command("GET", "plain")).isEqualTo(relock.clientId() + ":" + Thread.currentThread().getId());
        assertThat((Long) server.command("PTTL", "plain")).isPositive();
        assertThat(relock.getLockInfo("plain").holders()).containsOnlyKeys(server.command("GET", "plain").toString());
        lock.unlock();
        assertThat(server.command("EXISTS", "plain")).isEqualTo(0L);
    }
}
