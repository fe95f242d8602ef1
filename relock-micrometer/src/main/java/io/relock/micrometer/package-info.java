/**
 * Micrometer meters and observations of a Relock client's lock events, built on core's
 * {@link io.relock.LockObserver} SPI; no Spring.
 *
 * <ul>
 *   <li>{@link io.relock.micrometer.RelockMetrics}: a {@code MeterBinder} with timers of waits
 *       and holds, the locks held now, lost leases, force-unlocks and the watchdog's renewals,
 *       tagged by lock name with a cap on distinct names.</li>
 *   <li>{@link io.relock.micrometer.RelockObservations}: one {@code Observation} per acquire,
 *       parented to the caller's current observation (a span, with a tracing bridge).</li>
 * </ul>
 */
package io.relock.micrometer;
