package io.relock.testkit;

import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The lifecycle that {@link SentinelExtension} and {@link ClusterExtension} share: one topology
 * per test class, started before the first test and stopped after the last (only the outermost
 * class starts it; {@code @Nested} classes share it), prepared before each test, and injected
 * into parameters of its type.
 *
 * @param <T> the topology type
 */
abstract class TopologyExtension<T extends AutoCloseable> implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        ParameterResolver {

    private final Class<T> type;
    private final String description;
    private final Supplier<T> starter;
    private final Consumer<T> preparer;

    private volatile T topology; // written under this object's lock
    private String ownerId; // unique id of the class context that started the topology; guarded by this

    TopologyExtension(Class<T> type, String description, Supplier<T> starter, Consumer<T> preparer) {
        this.type = type;
        this.description = description;
        this.starter = starter;
        this.preparer = preparer;
    }

    /** Returns the topology; see the subclasses' {@code topology()}. */
    final T current() {
        T current = topology;
        if (current == null) {
            throw new IllegalStateException("no topology at this point: " + description + " starts it before the test class"
                    + " and stops it after it");
        }
        return current;
    }

    /**
     * Starts the topology before the outermost test class.
     *
     * @throws IllegalStateException if it does not start
     */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (topology == null) {
            topology = starter.get();
            ownerId = context.getUniqueId();
        }
    }

    /**
     * Stops the topology after the class that started it.
     *
     * @throws Exception if stopping it fails (the topology is dropped anyway)
     */
    @Override
    public synchronized void afterAll(ExtensionContext context) throws Exception {
        if (context.getUniqueId().equals(ownerId)) {
            try {
                topology.close();
            } finally {
                topology = null;
                ownerId = null;
            }
        }
    }

    /**
     * Repairs the topology after what the previous test did, and empties it.
     *
     * @throws ExtensionConfigurationException if JUnit never called {@link #beforeAll} (an
     *     extension registered on a non-static field with a per-method lifecycle)
     * @throws IllegalStateException if the topology cannot be repaired in time
     */
    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        T current = topology;
        if (current == null) {
            throw new ExtensionConfigurationException(description + " must be registered on a static field "
                    + "(or the class must use @TestInstance(Lifecycle.PER_CLASS))");
        }
        preparer.accept(current);
    }

    /** Supports parameters of the topology's type. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == type;
    }

    /**
     * Returns the topology.
     *
     * @throws ParameterResolutionException outside the test class's lifetime
     */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        T current = topology;
        if (current == null) {
            throw new ParameterResolutionException("no topology for " + parameterContext.getDeclaringExecutable() + ": "
                    + description + " has one only while the test class runs");
        }
        return current;
    }
}
