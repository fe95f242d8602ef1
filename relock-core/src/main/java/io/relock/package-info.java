/**
 * Relock's public API: distributed locks on Redis.
 *
 * <p>Start with {@link io.relock.RelockConfig#builder()} and {@link io.relock.Relock#create},
 * then {@link io.relock.Relock#getLock(String)}. Everything outside this package is internal.
 *
 * <h2>Names</h2>
 * One idea has one name across the API and the faces built on it (relock-reactor, relock-kotlin,
 * relock-spring):
 * <ul>
 *   <li><b>Owner, owner id.</b> A hold belongs to an owner: a thread, or any other unit of work
 *       that carries an id from {@link io.relock.Relock#newOwnerId()} (a pipeline, a coroutine, a
 *       virtual-thread task). Parameters and accessors that take or give one are named
 *       {@code ownerId}; a thread's own id is a valid owner id, which is why the blocking methods
 *       need none. The one exception is {@link io.relock.LockLostEvent#ownerThreadId()}, kept
 *       for the Redisson-shaped listener contract; it carries the same owner id.</li>
 *   <li><b>Hold.</b> One owner's acquisition of a lock, re-entries included. A type whose name
 *       ends in {@code Hold} is a handle that ends a hold: {@link io.relock.LockHold} for
 *       try-with-resources, {@code ReactiveHold} for a pipeline. {@link io.relock.HeldLock} is
 *       not a handle but a snapshot, as its place beside {@link io.relock.Relock#heldLocks()}
 *       says: one lock this client holds, with no way to release it.</li>
 *   <li><b>Info.</b> A record named {@code *Info} ({@link io.relock.LockInfo},
 *       {@link io.relock.LeaderInfo}, {@link io.relock.ClientInfo}) is what Redis says now,
 *       read with one call; it is never updated afterwards.</li>
 *   <li><b>Listener and observer.</b> A {@link io.relock.LockListener} is application logic that
 *       must react to the loss of a hold (stop the work, alert); it runs on a worker thread and
 *       may take its time. A {@link io.relock.LockObserver} watches every event of a client for
 *       metrics, traces and logs; it runs synchronously where the event happens and must not
 *       block. A loss is reported to both.</li>
 *   <li><b>Not acquired, lost.</b> A face that turns a failed acquisition into an error throws
 *       {@link io.relock.LockNotAcquiredException}; work stopped because its hold went ends with
 *       {@link io.relock.LockLostException}. Both are {@link io.relock.RelockException}s, and no
 *       face has a class of its own for either.</li>
 * </ul>
 *
 * <h2>What each lock type supports</h2>
 * Every lock {@link io.relock.Relock} returns implements all of {@link io.relock.DistributedLock}
 * except where its Javadoc says otherwise, and then throws {@link UnsupportedOperationException}
 * at the call, never a wrong answer:
 * <ul>
 *   <li>{@link io.relock.DistributedLock#unlock(java.time.Duration) unlock(holdAtLeast)} and its
 *       async form: the reentrant, fair, fenced, spin and simple locks and the write lock; not the
 *       read lock (its lease is shared with other readers) nor multi-locks and RedLocks (each
 *       member would keep its own).</li>
 *   <li>{@link io.relock.DistributedLock#newCondition()}: none; a distributed lock has no
 *       condition variables.</li>
 *   <li>Everything else, {@link io.relock.DistributedLock#addLostListener} included: every type.</li>
 * </ul>
 * The interface keeps these methods rather than splitting into narrower ones so that code written
 * against {@code java.util.concurrent.locks.Lock} and Redisson's {@code RLock} moves over by
 * changing imports.
 */
package io.relock;
