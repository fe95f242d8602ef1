package io.relock;

import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The contract suite on every lock type through Sentinel: one master, two replicas,
 * three Sentinels, all real processes, started once per JVM for all types (and restored and
 * emptied before each test).
 */
class SentinelLockContractTest {

    @RegisterExtension
    static final SharedTopology<SentinelTopology> sentinel = SharedTopology.sentinel();

    /** The suite on one lock type, its clients connected through the Sentinels. */
    abstract class OnSentinel extends LockTypeContractTest {

        OnSentinel(LockType type) {
            super(type);
        }

        @Override
        protected Backend backend(RedisServer server) {
            return Backend.sentinel(sentinel.topology());
        }
    }

    @Nested
    class Reentrant extends OnSentinel {
        Reentrant() {
            super(LockType.REENTRANT);
        }
    }

    @Nested
    class Fair extends OnSentinel {
        Fair() {
            super(LockType.FAIR);
        }
    }

    @Nested
    class Fenced extends OnSentinel {
        Fenced() {
            super(LockType.FENCED);
        }
    }

    @Nested
    class Spin extends OnSentinel {
        Spin() {
            super(LockType.SPIN);
        }
    }

    @Nested
    class Simple extends OnSentinel {
        Simple() {
            super(LockType.SIMPLE);
        }
    }

    @Nested
    class Read extends OnSentinel {
        Read() {
            super(LockType.READ);
        }
    }

    @Nested
    class Write extends OnSentinel {
        Write() {
            super(LockType.WRITE);
        }
    }
}
