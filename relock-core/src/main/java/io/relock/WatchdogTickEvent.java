package io.relock;

/**
 * One watchdog tick's outcome, for {@link LockObserver#onWatchdogTick}. The watchdog ticks every
 * third of {@link RelockConfig#watchdogTimeout()} and renews every watchdog-renewed hold of the
 * client in a few batched calls.
 *
 * @param renewed holds whose lease was renewed
 * @param failed holds whose renewal failed this tick (Redis unreachable, a timeout); they are
 *     tried again at the next tick unless their lease would run out first
 * @param lost holds found gone or given up this tick (each also reported by
 *     {@link LockObserver#onLockLost})
 * @param lagNanos how much later than planned the tick started, in nanoseconds (a busy timer
 *     thread, a paused JVM); a lag near the lease is what loses locks
 */
public record WatchdogTickEvent(int renewed, int failed, int lost, long lagNanos) {
}
