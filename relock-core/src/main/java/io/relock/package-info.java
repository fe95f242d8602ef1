/**
 * Relock's public API: distributed locks on Redis.
 *
 * <p>Start with {@link io.relock.RelockConfig#builder()} and {@link io.relock.Relock#create},
 * then {@link io.relock.Relock#getLock(String)}. Everything outside this package is internal.
 */
package io.relock;
