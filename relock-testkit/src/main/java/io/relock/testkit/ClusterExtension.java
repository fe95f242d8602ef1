package io.relock.testkit;

import java.util.Objects;

/**
 * A JUnit 5 extension that gives a test class a {@link ClusterTopology}: one for the whole
 * class, since forming one takes seconds.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ClusterExtension cluster = ClusterExtension.perClass();
 *
 * @Test
 * void lockSurvivesAFailover(ClusterTopology cluster) {
 *     ... cluster.uris() ... cluster.failover(cluster.masterFor("{lock}")) ...
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field. The cluster starts before the first test and stops
 * after the last, including those of {@code @Nested} classes. Before each test it is
 * {@linkplain ClusterTopology#restore() restored} — paused nodes resumed, killed or stopped ones
 * restarted, all healthy — and {@linkplain ClusterTopology#flushAll() emptied}, so tests may
 * inject faults freely; masters, though, stay wherever failovers put them, so ask
 * {@link ClusterTopology#masterFor(String)}. {@code ClusterTopology} parameters of test
 * methods, constructors and lifecycle methods are resolved to it; so is {@link #topology()}.
 *
 * <p>Tests that share the cluster must not run concurrently.
 */
public final class ClusterExtension extends TopologyExtension<ClusterTopology> {

    private ClusterExtension(ClusterTopology.Builder builder) {
        super(ClusterTopology.class, "ClusterExtension.perClass()", builder::start, cluster -> {
            cluster.restore();
            cluster.flushAll();
        });
    }

    /**
     * Returns an extension with a default cluster (three masters with a replica each) for the
     * whole test class.
     *
     * @return a new extension
     */
    public static ClusterExtension perClass() {
        return new ClusterExtension(ClusterTopology.builder());
    }

    /**
     * Returns an extension with the cluster that {@code builder} starts, for the whole test class.
     *
     * @param builder a configured builder; the extension calls its {@code start()}
     * @return a new extension
     * @throws NullPointerException if {@code builder} is null
     */
    public static ClusterExtension perClass(ClusterTopology.Builder builder) {
        return new ClusterExtension(Objects.requireNonNull(builder, "builder must not be null"));
    }

    /**
     * Returns the cluster.
     *
     * @return the running cluster
     * @throws IllegalStateException before the test class starts or after it ends
     */
    public ClusterTopology topology() {
        return current();
    }
}
