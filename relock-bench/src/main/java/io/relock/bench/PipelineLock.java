package io.relock.bench;

import reactor.core.publisher.Mono;

/**
 * A lock as a reactive pipeline holds it (S7): {@link #withLock} takes it when subscribed to,
 * without blocking a thread, subscribes to the work holding it, and releases it when the work
 * completes, errors or is cancelled. Every subscription is an owner of its own, whichever
 * threads run it.
 */
interface PipelineLock {

    /**
     * The work, run holding the lock.
     *
     * @return the work's value, signalled once the lock is released again
     */
    <T> Mono<T> withLock(Mono<T> work);
}
