package io.relock;

import io.relock.testkit.ClusterExtension;
import io.relock.testkit.RedisServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reentrant lock's contract suite, unchanged, on a Redis Cluster of three masters with a
 * replica each, all real processes. On Redis 7+ the waiters use sharded pub/sub.
 */
class ClusterLockContractTest extends LockContractTest {

    @RegisterExtension
    static final ClusterExtension cluster = ClusterExtension.perClass();

    @Override
    protected Backend backend(RedisServer server) {
        return Backend.cluster(cluster.topology());
    }

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return client.getLock(name);
    }
}
