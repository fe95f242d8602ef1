/**
 * Relock's implementation. Nothing here is API: the module exports only {@code io.relock}, and
 * these packages may change in any release. The layers, top down; each uses only the ones
 * below it, and {@code LayersTest} holds them to it:
 * <ul>
 *   <li>{@code leader}: leader election on the fenced lock; {@code multi}: locks over several
 *       locks (multi-lock, RedLock);
 *   <li>this package: {@link io.relock.internal.ClientRuntime}, one client's wiring (gateway,
 *       unlock channels, watchdog, observers, the client registry);
 *   <li>{@code types}: one descriptor per lock type ({@code LockTypes}) and the drivers that run
 *       each type's scripts, on the client as {@code DriverClient} describes it;
 *   <li>{@code engine}: the one engine every type shares: an acquire's state machine, the wait
 *       policies, a lock's {@code Turn} within the client (tickets, hand-overs, grants, claims),
 *       on the client as {@code LockClient} describes it;
 *   <li>{@code lease}: the holds of the client and the watchdog that renews them;
 *   <li>{@code redis}: the connection per topology, scripts with their retry budget, replica
 *       confirmation, key names;
 *   <li>{@code support}: argument checks, exception translation, futures, observers, owner ids.
 * </ul>
 */
package io.relock.internal;
