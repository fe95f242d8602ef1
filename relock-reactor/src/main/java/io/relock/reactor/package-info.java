/**
 * Project Reactor face of Relock's locks: holds owned by a pipeline, not a thread.
 *
 * <ul>
 *   <li>{@link io.relock.reactor.ReactiveLock}: {@code withLock} / {@code tryWithLock} around a
 *       {@code Mono} or {@code Flux}, and {@code acquire} / {@code tryAcquire} for
 *       {@code usingWhen}-shaped code. The owner lives in the subscriber's Reactor
 *       {@code Context}, so nested calls in one pipeline re-enter whichever thread runs them.</li>
 *   <li>{@link io.relock.reactor.ReactiveHold}: one hold, released once; its
 *       {@code whileHeld(work)} cancels the work if the hold is lost.</li>
 *   <li>{@link io.relock.LockNotAcquiredException}: a {@code tryWithLock} whose wait ran
 *       out.</li>
 * </ul>
 *
 * <p>Nothing here blocks a thread: acquires, releases and the lease-loss signal are Relock's
 * asynchronous calls ({@code lockAsync}, {@code tryLockAsync}, {@code unlockAsync},
 * {@code addLostListener}).
 */
package io.relock.reactor;
