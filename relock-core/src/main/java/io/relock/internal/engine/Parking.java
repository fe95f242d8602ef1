package io.relock.internal.engine;

import io.netty.util.Timer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The waiters of this client parked on one unlock channel, for its {@link Turn}. An unlock
 * message wakes the longest parked waiter; a read-unlock, or a reconnect, wakes all of them.
 * Every wake-up is only a hint to try again.
 *
 * <p>A waiter notes the message count before its attempt and passes it to {@link #park}, so a
 * release announced between its failed attempt and its park is not slept through:
 * <ul>
 *   <li>an unlock message that found nobody parked is kept, and the first waiter to park that
 *       had not seen it takes it and tries again at once; the others park. One release lets one
 *       owner in, so one waiter of this client retrying for it is enough, and the herd of every
 *       waiter in flight retrying in vain is avoided;
 *   <li>a read-unlock lets every reader in, so every waiter that had not seen it tries again.
 * </ul>
 * A waiter that took a wake-up and ends without trying for it hands it on ({@link #signal}), so
 * the last release before a park always sends someone of this client back to Redis.
 */
final class Parking {

    /** Unlock messages kept for waiters in flight; past this the oldest are dropped (see {@link #signal}). */
    static final int KEPT_MESSAGES = 64;

    private final Timer timer;
    private final ArrayDeque<Waiter> parked = new ArrayDeque<>();
    /** Numbers of unlock messages that woke nobody, oldest first; guarded by this. */
    private final ArrayDeque<Long> unheard = new ArrayDeque<>();
    private long messages; // guarded by this
    private long lastWakeAll; // guarded by this

    Parking(Timer timer) {
        this.timer = timer;
    }

    /** How many messages came so far; a waiter reads it before its attempt. */
    synchronized long messages() {
        return messages;
    }

    /**
     * Runs {@code wakeUp} once: at once if a message came since the count {@code seen} that this
     * waiter may take (any read-unlock, or an unlock nobody else took), else at the next message
     * that picks this waiter or after {@code timeoutMillis}, whichever is first.
     */
    Waiter park(Runnable wakeUp, long timeoutMillis, long seen) {
        return park(null, wakeUp, timeoutMillis, seen);
    }

    /** {@link #park(Runnable, long, long)} for {@code acquisition}, which {@link #take} may then take over. */
    Waiter park(Acquisition acquisition, Runnable wakeUp, long timeoutMillis, long seen) {
        Waiter waiter = new Waiter(this, acquisition, wakeUp);
        boolean runNow;
        synchronized (this) {
            runNow = lastWakeAll > seen || takeKept(seen);
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

    /** Takes the oldest kept unlock message that came after {@code seen}; guarded by this. */
    private boolean takeKept(long seen) {
        Iterator<Long> kept = unheard.iterator();
        while (kept.hasNext()) {
            if (kept.next() > seen) {
                kept.remove();
                return true;
            }
        }
        return false;
    }

    /**
     * A message: wakes the longest parked waiter, or every one when {@code all}. An unlock that
     * wakes nobody is kept for a waiter in flight. Returns how many were woken.
     */
    int signal(boolean all) {
        List<Waiter> woken = new ArrayList<>();
        synchronized (this) {
            messages++;
            if (all) {
                lastWakeAll = messages;
                unheard.clear();
                woken.addAll(parked);
                parked.clear();
            } else if (!parked.isEmpty()) {
                woken.add(parked.pollFirst());
            } else {
                unheard.addLast(messages);
                // The newest are kept: the last release before a park is the one that matters,
                // and it is newer than anything the parking waiter saw.
                if (unheard.size() > KEPT_MESSAGES) {
                    unheard.pollFirst();
                }
            }
        }
        woken.forEach(Waiter::fire);
        return woken.size();
    }

    /**
     * Takes the parked waiter whose acquire started first, among those {@code eligible} accepts:
     * it wakes no more (no message, no timeout), and its acquisition is the caller's to end. By
     * the start of the acquire, not of the park: a waiter woken to try again parks anew, and
     * must not lose its turn for it. Null if none.
     */
    Acquisition take(Predicate<Acquisition> eligible) {
        Waiter taken;
        synchronized (this) {
            do {
                taken = null;
                for (Waiter waiter : parked) {
                    if (waiter.acquisition != null && !waiter.woken() && eligible.test(waiter.acquisition)
                            && (taken == null || waiter.acquisition.startedNanos() - taken.acquisition.startedNanos() < 0)) {
                        taken = waiter;
                    }
                }
                // One woken since the look (a message, its timeout) is on its way out: look again without it.
            } while (taken != null && !taken.reserve());
            if (taken != null) {
                parked.remove(taken);
            }
        }
        if (taken == null) {
            return null;
        }
        taken.cancelTimeout();
        return taken.acquisition;
    }

    synchronized void remove(Waiter waiter) {
        parked.remove(waiter);
    }

    synchronized int parked() {
        return parked.size();
    }
}
