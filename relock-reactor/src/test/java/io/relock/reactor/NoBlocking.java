package io.relock.reactor;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound once per JVM before the first test class that uses it: from then on a
 * blocking call on a thread that must not block (Reactor's parallel and single schedulers' threads)
 * throws {@code BlockingOperationError}, which fails the pipeline and so the test.
 * {@link BlockHoundTest} proves it is armed.
 */
final class NoBlocking implements BeforeAllCallback {

    static {
        // Lettuce guards each command write with a short ReentrantLock (its SharedLock), which
        // parks for a moment when two threads write at once. An error thrown there would leave
        // Lettuce's writer count off by one (its finally undoes an increment that never happened)
        // and every later write on the connection spinning: a hang, not a failed test. That
        // lock is Lettuce's design, not a blocking call of Relock's, so it is allowed.
        //
        // relock-zookeeper's async calls hand their work to its operation pool (ZkGateway.submit),
        // whose ThreadPoolExecutor takes a short lock that parks when pipelines on two parallel
        // threads start at once; an error thrown inside it leaves the pool's worker count off.
        // Like Lettuce's lock, that lock is allowed.
        BlockHound.install(builder -> builder
                .allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
                .allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "lockWritersExclusive")
                .allowBlockingCallsInside("io.relock.zookeeper.internal.ZkGateway", "submit"));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        // Installed by the static initialiser, which the first use of this class runs.
    }
}
