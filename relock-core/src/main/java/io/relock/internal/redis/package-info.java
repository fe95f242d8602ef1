/**
 * Everything that talks to Redis: {@code RedisGateway} (the facade the rest calls), one
 * {@code Connector} per topology (standalone, master/replica, Sentinel with its watch,
 * Cluster), the {@code RetryLoop} with the retry budgets, the {@code ScriptRunner} for the Lua
 * scripts ({@code Script}), {@code ReplicaSync} ({@code WAIT}) and the key names
 * ({@code LockKeys}).
 */
package io.relock.internal.redis;
