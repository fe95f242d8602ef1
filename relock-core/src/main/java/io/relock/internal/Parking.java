package io.relock.internal;

import io.netty.util.Timer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The waiters parked on one unlock channel. An unlock message wakes the longest parked waiter
 * (a read-unlock, or a reconnect, wakes all of them); a message that finds nobody parked is
 * kept as a permit, so that a release between a waiter's failed attempt and its park is not
 * lost: the next park then runs at once. Every wake-up is only a hint to try again.
 */
final class Parking {

    private final Timer timer;
    private final ArrayDeque<UnlockChannels.Waiter> parked = new ArrayDeque<>();
    private int permits; // guarded by this

    Parking(Timer timer) {
        this.timer = timer;
    }

    /**
     * Runs {@code wakeUp} once: at once if a permit is there, else at the next message or after
     * {@code timeoutMillis}, whichever is first.
     */
    UnlockChannels.Waiter park(Runnable wakeUp, long timeoutMillis) {
        UnlockChannels.Waiter waiter = new UnlockChannels.Waiter(this, wakeUp);
        boolean runNow;
        synchronized (this) {
            runNow = permits > 0;
            if (runNow) {
                permits--;
            } else {
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

    /**
     * A message: wakes the longest parked waiter, or every one when {@code all}; with nobody
     * parked, a single wake-up is kept as a permit. Returns how many were woken.
     */
    int signal(boolean all) {
        List<UnlockChannels.Waiter> woken = new ArrayList<>();
        synchronized (this) {
            if (all) {
                woken.addAll(parked);
                parked.clear();
            } else if (!parked.isEmpty()) {
                woken.add(parked.pollFirst());
            } else {
                permits++;
            }
        }
        woken.forEach(UnlockChannels.Waiter::fire);
        return woken.size();
    }

    synchronized void remove(UnlockChannels.Waiter waiter) {
        parked.remove(waiter);
    }

    synchronized int permits() {
        return permits;
    }

    synchronized int parked() {
        return parked.size();
    }
}
