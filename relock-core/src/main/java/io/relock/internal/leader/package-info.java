/**
 * Leader election on a fenced lock ({@link io.relock.LeaderElection}), built on the public lock
 * API: async acquires under owner ids of their own, the watchdog's lease and lock-lost
 * listeners. Nothing here is API.
 */
package io.relock.internal.leader;
