package io.relock;

import io.relock.testkit.ClusterTopology;
import io.relock.testkit.RedisServer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The contract suite on every lock type on a Redis Cluster of three masters with a
 * replica each, all real processes, started once per JVM for all types (and restored and emptied
 * before each test). On Redis 7+ the waiters use sharded pub/sub. Every key and channel of a
 * lock carries the name's hash tag, so the suite's plain names need none.
 */
class ClusterLockContractTest {

    @RegisterExtension
    static final SharedTopology<ClusterTopology> cluster = SharedTopology.cluster();

    /** The suite on one lock type, its clients connected to the cluster. */
    abstract class OnCluster extends LockTypeContractTest {

        OnCluster(LockType type) {
            super(type);
        }

        @Override
        protected Backend backend(RedisServer server) {
            return Backend.cluster(cluster.topology());
        }
    }

    @Nested
    class Reentrant extends OnCluster {
        Reentrant() {
            super(LockType.REENTRANT);
        }
    }

    @Nested
    class Fair extends OnCluster {
        Fair() {
            super(LockType.FAIR);
        }
    }

    @Nested
    class Fenced extends OnCluster {
        Fenced() {
            super(LockType.FENCED);
        }
    }

    @Nested
    class Spin extends OnCluster {
        Spin() {
            super(LockType.SPIN);
        }
    }

    @Nested
    class Simple extends OnCluster {
        Simple() {
            super(LockType.SIMPLE);
        }
    }

    @Nested
    class Read extends OnCluster {
        Read() {
            super(LockType.READ);
        }
    }

    @Nested
    class Write extends OnCluster {
        Write() {
            super(LockType.WRITE);
        }
    }
}
