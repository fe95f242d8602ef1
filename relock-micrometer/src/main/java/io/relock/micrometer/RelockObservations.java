package io.relock.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.relock.AcquireEvent;
import io.relock.LockObserver;
import io.relock.Relock;
import java.util.Locale;
import java.util.Objects;

/**
 * One Micrometer {@link Observation} per acquire of one {@link Relock} client's locks: with a
 * tracing bridge, a span per acquire, a child of the caller's current span.
 *
 * <pre>{@code
 * RelockObservations observations = new RelockObservations(relock, observationRegistry);
 * ...
 * observations.close(); // before relock.close()
 * }</pre>
 *
 * <p>The observation is named {@code relock.lock.acquire} (contextual name
 * {@code "lock acquire"}). It starts when the acquire starts, on the calling thread, so its parent
 * is the observation current there; it stops when the acquire ends (acquired, timed out,
 * interrupted or failed), usually on a client I/O thread. No scope is opened: the lock is awaited
 * and may be acquired on another thread, so the observation is never made current. Key values,
 * all of low cardinality: {@code lock} (the lock's name), {@code type} (the lock type), and,
 * added at the stop, {@code outcome} = {@code acquired | timeout | interrupted | error}; the owner
 * id is a high-cardinality key value {@code owner}. A failed acquire sets the observation's
 * error. The lock's hold is not observed (see {@link RelockMetrics} for hold times).
 *
 * <p>A meter handler (Micrometer's {@code DefaultMeterObservationHandler}) turns these into a
 * timer {@code relock.lock.acquire} tagged by lock name; cap the names on that registry with
 * {@link RelockMetrics#lockNameCap(int)}.
 *
 * <p>With {@link ObservationRegistry#NOOP} (or a registry without handlers) nothing is created.
 * An exception from a handler is logged by the client and does not affect the lock. An acquire
 * in flight when this is closed is not stopped (the client no longer reports its end to this
 * observer), so its observation is never reported.
 */
public final class RelockObservations implements AutoCloseable {

    private static final String NAME = "relock.lock.acquire";

    private final Relock relock;
    private final ObservationRegistry registry;
    private final Observer observer = new Observer();
    private volatile boolean closed;

    /**
     * Starts observing the acquires of {@code relock}'s locks in {@code registry}.
     *
     * @param relock the client whose acquires are observed
     * @param registry where the observations go
     * @throws NullPointerException if {@code relock} or {@code registry} is null
     */
    public RelockObservations(Relock relock, ObservationRegistry registry) {
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        relock.addObserver(observer);
    }

    /**
     * Stops observing: removes the observer from the client. Calling it again has no effect; it
     * does not close the client.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        relock.removeObserver(observer);
    }

    @Override
    public String toString() {
        return "RelockObservations[client=" + relock.clientId() + "]";
    }

    /** Starts and stops the observations; the started one travels as the acquire's context. */
    private final class Observer implements LockObserver {

        @Override
        public Object onAcquireStart(String lockName, String lockType, long ownerId) {
            if (registry.isNoop()) {
                return null;
            }
            Observation observation = Observation.createNotStarted(NAME, registry)
                    .contextualName("lock acquire")
                    .lowCardinalityKeyValue("lock", lockName)
                    .lowCardinalityKeyValue("type", lockType)
                    .highCardinalityKeyValue("owner", Long.toString(ownerId));
            if (observation.isNoop()) {
                return null;
            }
            return new Started(RelockObservations.this, observation.start());
        }

        @Override
        public void onAcquireEnd(AcquireEvent event, Object context) {
            // Only an observation this instance started (the context of another observer is not ours).
            if (!(context instanceof Started started) || started.owner != RelockObservations.this) {
                return;
            }
            Observation observation = started.observation;
            observation.lowCardinalityKeyValue("outcome", event.outcome().name().toLowerCase(Locale.ROOT));
            if (event.outcome() == AcquireEvent.Outcome.ERROR && event.error() != null) {
                observation.error(event.error());
            }
            observation.stop();
        }
    }

    /** An observation started by {@code owner}. */
    private record Started(RelockObservations owner, Observation observation) {
    }
}
