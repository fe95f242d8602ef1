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
        BlockHound.install();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        // Installed by the static initialiser, which the first use of this class runs.
    }
}
