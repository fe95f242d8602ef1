package io.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** A parked wake-up (on a {@link Turn}'s {@link Parking}, or on a timer alone); fires at most once. */
public final class Waiter {

    /** A wake-up after {@code millis} that no message can trigger (for waiting by backoff). */
    public static Waiter timed(Timer timer, Runnable wakeUp, long millis) {
        Waiter waiter = new Waiter(null, null, wakeUp);
        waiter.setTimeout(timer.newTimeout(t -> waiter.fire(), Math.max(1, millis), TimeUnit.MILLISECONDS));
        return waiter;
    }

    private final Parking parking;
    /** The acquisition that parked, when a release may take it over (see {@link Parking#take}). */
    final Acquisition acquisition;
    private final Runnable wakeUp;
    private final AtomicBoolean fired = new AtomicBoolean();
    private final AtomicBoolean hurried = new AtomicBoolean();
    private volatile Timeout timeout;

    Waiter(Parking parking, Acquisition acquisition, Runnable wakeUp) {
        this.parking = parking;
        this.acquisition = acquisition;
        this.wakeUp = wakeUp;
    }

    void setTimeout(Timeout timeout) {
        this.timeout = timeout;
    }

    /** Makes sure the waiter wakes within {@code millis} (once per waiter; sooner timeouts stand). */
    void fireWithin(Timer timer, long millis) {
        if (!fired.get() && !hurried.getAndSet(true)) {
            Timeout sooner = timer.newTimeout(t -> fire(), Math.max(1, millis), TimeUnit.MILLISECONDS);
            if (fired.get()) {
                sooner.cancel();
            }
        }
    }

    /** Wakes the waiter now (if it has not woken yet). */
    public void fire() {
        if (!fired.compareAndSet(false, true)) {
            return;
        }
        if (parking != null) {
            parking.remove(this);
        }
        cancelTimeout();
        wakeUp.run();
    }

    /** Whether it woke, or was taken (see {@link #reserve()}). */
    boolean woken() {
        return fired.get();
    }

    /**
     * Takes the waiter instead of waking it: true if it had not woken yet, and then it never
     * will; whoever took it drives its acquisition. The caller removes it from its parking.
     */
    boolean reserve() {
        return fired.compareAndSet(false, true);
    }

    /**
     * Takes the waiter out of its parking instead of waking it (see {@link #reserve()}): true
     * if it had not woken yet.
     */
    boolean take() {
        if (!reserve()) {
            return false;
        }
        if (parking != null) {
            parking.remove(this);
        }
        cancelTimeout();
        return true;
    }

    void cancelTimeout() {
        Timeout pending = timeout;
        if (pending != null) {
            pending.cancel();
        }
    }
}
