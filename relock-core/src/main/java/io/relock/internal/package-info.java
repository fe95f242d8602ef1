/**
 * Relock's implementation. Nothing here is API: the module exports only {@code io.relock}, and
 * these packages may change in any release. The layers, top down:
 * <ul>
 *   <li>this package: {@link io.relock.internal.ClientRuntime}, one client's wiring (gateway,
 *       unlock channels, watchdog, observers, the client registry);
 *   <li>{@code types}: one descriptor per lock type ({@code LockTypes}) and the drivers that run
 *       each type's scripts; {@code multi}: locks over several locks (multi-lock, RedLock);
 *       {@code leader}: leader election on the fenced lock;
 *   <li>{@code engine}: the one engine every type shares: an acquire's state machine, the wait
 *       policies, a lock's {@code Turn} within the client (tickets, hand-overs, grants, claims);
 *   <li>{@code lease}: the watchdog that renews every held lock of the client;
 *   <li>{@code redis}: the connection per topology, scripts with their retry budget, replica
 *       confirmation, key names;
 *   <li>{@code support}: argument checks, exception translation, futures.
 * </ul>
 */
package io.relock.internal;
