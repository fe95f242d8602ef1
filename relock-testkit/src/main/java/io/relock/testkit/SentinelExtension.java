package io.relock.testkit;

import java.util.Objects;

/**
 * A JUnit 5 extension that gives a test class a {@link SentinelTopology}: one for the whole
 * class, since starting one takes seconds.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final SentinelExtension sentinel = SentinelExtension.perClass();
 *
 * @Test
 * void lockSurvivesAFailover(SentinelTopology topology) {
 *     ... topology.sentinelUri() ... topology.failover() ...
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field. The topology starts before the first test and stops
 * after the last, including those of {@code @Nested} classes. Before each test it is
 * {@linkplain SentinelTopology#restore() restored} — paused servers resumed, killed or stopped
 * ones restarted, roles repaired, all healthy — and {@linkplain SentinelTopology#flushAll()
 * emptied}, so tests may inject faults freely; the master, though, stays wherever failovers put
 * it, so ask {@link SentinelTopology#master()}. {@code SentinelTopology} parameters of test
 * methods, constructors and lifecycle methods are resolved to it; so is {@link #topology()}.
 *
 * <p>Tests that share the topology must not run concurrently.
 */
public final class SentinelExtension extends TopologyExtension<SentinelTopology> {

    private SentinelExtension(SentinelTopology.Builder builder) {
        super(SentinelTopology.class, "SentinelExtension.perClass()", builder::start, topology -> {
            topology.restore();
            topology.flushAll();
        });
    }

    /**
     * Returns an extension with a default topology (one master, two replicas, three Sentinels)
     * for the whole test class.
     *
     * @return a new extension
     */
    public static SentinelExtension perClass() {
        return new SentinelExtension(SentinelTopology.builder());
    }

    /**
     * Returns an extension with the topology that {@code builder} starts, for the whole test class.
     *
     * @param builder a configured builder; the extension calls its {@code start()}
     * @return a new extension
     * @throws NullPointerException if {@code builder} is null
     */
    public static SentinelExtension perClass(SentinelTopology.Builder builder) {
        return new SentinelExtension(Objects.requireNonNull(builder, "builder must not be null"));
    }

    /**
     * Returns the topology.
     *
     * @return the running topology
     * @throws IllegalStateException before the test class starts or after it ends
     */
    public SentinelTopology topology() {
        return current();
    }
}
