/**
 * The holds of a client ({@code Hold}) and the watchdog: one timer per client renewing every
 * held lock in batched script calls.
 */
package io.relock.internal.lease;
