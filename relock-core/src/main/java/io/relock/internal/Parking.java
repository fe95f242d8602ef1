package io.relock.internal;

import io.netty.util.Timer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The waiters parked on one unlock channel. An unlock message wakes the longest parked waiter
 * (a read-unlock, or a reconnect, wakes all of them). Messages are counted: a waiter notes the
 * count before its attempt, and parks only if no message came since; otherwise it tries again
 * at once. So a release announced between a waiter's failed attempt and its park is never lost,
 * whatever kind of message it was and however many waiters were between the two. Every wake-up
 * is only a hint to try again.
 */
final class Parking {

    private final Timer timer;
    private final ArrayDeque<UnlockChannels.Waiter> parked = new ArrayDeque<>();
    private long messages; // guarded by this

    Parking(Timer timer) {
        this.timer = timer;
    }

    /** How many messages came so far; a waiter reads it before its attempt. */
    synchronized long messages() {
        return messages;
    }

    /**
     * Runs {@code wakeUp} once: at once if a message came since the count {@code seen}, else at
     * the next message that picks this waiter or after {@code timeoutMillis}, whichever is first.
     */
    UnlockChannels.Waiter park(Runnable wakeUp, long timeoutMillis, long seen) {
        UnlockChannels.Waiter waiter = new UnlockChannels.Waiter(this, wakeUp);
        boolean runNow;
        synchronized (this) {
            runNow = messages != seen;
            if (!runNow) {
                parked.addLast(waiter);
            }
        }
        if (runNow) {
            waiter.fire();
        } else {
            // Set after the waiter is visible to messages: one that fires it first makes this
            // timeout a no-op when it comes.
            waiter.setTimeout(timer.newTimeout(t -> waiter.fire(), Math.max(1, timeoutMillis), TimeUnit.MILLISECONDS));
        }
        return waiter;
    }

    /** A message: wakes the longest parked waiter, or every one when {@code all}. Returns how many. */
    int signal(boolean all) {
        List<UnlockChannels.Waiter> woken = new ArrayList<>();
        synchronized (this) {
            messages++;
            if (all) {
                woken.addAll(parked);
                parked.clear();
            } else if (!parked.isEmpty()) {
                woken.add(parked.pollFirst());
            }
        }
        woken.forEach(UnlockChannels.Waiter::fire);
        return woken.size();
    }

    synchronized void remove(UnlockChannels.Waiter waiter) {
        parked.remove(waiter);
    }

    synchronized int parked() {
        return parked.size();
    }
}
