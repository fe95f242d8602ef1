/**
 * The {@code relock} command line: inspect one lock, list the locks on a Redis, and force a
 * lock open. Entry point {@link io.relock.cli.Main}; the commands read Redis through
 * relock-core's {@link io.relock.Relock} client and, for what its API does not show (a lock's
 * type, a fair lock's queue, a fencing token, SCAN), through a Lettuce connection of their own.
 * An application, not an API: the types here may change in any release.
 */
package io.relock.cli;
