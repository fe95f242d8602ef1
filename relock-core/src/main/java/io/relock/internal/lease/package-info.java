/** The watchdog: one timer per client renewing every held lock in batched script calls. */
package io.relock.internal.lease;
