/**
 * Relock's implementation: the shared lock engine, scripts, pub/sub waiting, the watchdog and
 * the Redis gateway. Nothing here is API; it may change in any release without notice. Use the
 * types in {@code io.relock}.
 */
package io.relock.internal;
