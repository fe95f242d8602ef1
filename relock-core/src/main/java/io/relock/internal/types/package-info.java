/**
 * The lock types: {@code LockTypes} describes each one once (name, kind, unlock channel, driver
 * and wait policy, force-unlock), and the drivers run its scripts. Adding a type touches its
 * descriptor, its driver and its Lua, nothing else.
 */
package io.relock.internal.types;
