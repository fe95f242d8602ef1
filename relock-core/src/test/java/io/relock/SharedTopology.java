package io.relock;

import io.relock.testkit.ClusterTopology;
import io.relock.testkit.SentinelTopology;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One Sentinel topology and one cluster for the whole test JVM, shared by every class that
 * registers this extension (the contract matrix, the failover tests), since each takes seconds
 * to start. The
 * topology starts before the first test that needs it and lives in JUnit's root store, which
 * closes it (an {@link AutoCloseable}) when the whole run ends. Before each test it is
 * restored (faults repaired, all healthy) and emptied, so the tests that share it see what a
 * fresh one would show. Register it on a static field; tests must not run concurrently.
 */
final class SharedTopology<T extends AutoCloseable> implements BeforeEachCallback {

    private static final Namespace NAMESPACE = Namespace.create(SharedTopology.class);

    private final Class<T> type;
    private final Supplier<T> starter;
    private final Consumer<T> preparer;
    private volatile T current;

    private SharedTopology(Class<T> type, Supplier<T> starter, Consumer<T> preparer) {
        this.type = type;
        this.starter = starter;
        this.preparer = preparer;
    }

    /** The JVM's Sentinel topology: one master, two replicas, three Sentinels. */
    static SharedTopology<SentinelTopology> sentinel() {
        return new SharedTopology<>(SentinelTopology.class, SentinelTopology::start, topology -> {
            topology.restore();
            topology.flushAll();
        });
    }

    /** The JVM's cluster: three masters with a replica each. */
    static SharedTopology<ClusterTopology> cluster() {
        return new SharedTopology<>(ClusterTopology.class, ClusterTopology::start, cluster -> {
            cluster.restore();
            cluster.flushAll();
        });
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        T topology = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(type, key -> starter.get(), type);
        preparer.accept(topology);
        current = topology;
    }

    /** The topology, prepared for the running test. */
    T topology() {
        T topology = current;
        if (topology == null) {
            throw new IllegalStateException("no shared " + type.getSimpleName() + " before the first test that uses it");
        }
        return topology;
    }
}
