package io.relock;

import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reentrant lock's contract suite, unchanged, through Sentinel: one master, two replicas,
 * three sentinels, all real processes.
 */
class SentinelLockContractTest extends LockContractTest {

    @RegisterExtension
    static final SentinelExtension sentinel = SentinelExtension.perClass();

    @Override
    protected Backend backend(RedisServer server) {
        return Backend.sentinel(sentinel.topology());
    }

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return client.getLock(name);
    }
}
