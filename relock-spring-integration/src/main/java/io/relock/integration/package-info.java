/**
 * Spring Integration on Relock: {@link io.relock.integration.RelockLockRegistry}, a
 * {@code LockRegistry} whose locks are Relock's reentrant locks, for everything in Spring
 * Integration that takes one ({@code LockRegistryLeaderInitiator}, the aggregator's and the
 * idempotent receiver's lock registries, {@code LockRegistry.executeLocked}) and for code
 * written against {@code RedisLockRegistry}.
 */
package io.relock.integration;
