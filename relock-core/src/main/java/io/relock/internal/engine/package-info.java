/**
 * The lock engine shared by every lock type: {@code LockEngine} (lock, unlock, hold counts),
 * {@code Acquisition} with its {@code AcquisitionState} (one acquire as a compare-and-set state
 * machine), the {@code WaitPolicy} implementations that wait between attempts, and the
 * {@code Turn} that owns who of the client's waiters gets a lock next. The words of the
 * hand-off protocol (ticket, hand-over, grant, claim, yield, mark, take-over) are defined once,
 * in {@link io.relock.internal.engine.Turn}.
 */
package io.relock.internal.engine;
