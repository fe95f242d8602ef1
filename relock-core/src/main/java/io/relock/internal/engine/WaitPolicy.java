package io.relock.internal.engine;

import io.relock.internal.lease.Watchdog;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How a waiter spends the time between two acquire attempts. An {@link Acquisition} whose
 * attempt found the lock busy asks its policy to wait for the next chance; the policy parks it,
 * and the wake-up runs its next attempt. Three ways:
 * <ul>
 *   <li>{@link #PUB_SUB}: subscribed to the lock's unlock channel, parked on its {@link Turn}
 *       until a release message, a grant to its ticket, or the holder's TTL;
 *   <li>{@link #backoff}: on a timer, by capped exponential backoff, without any subscription
 *       (the spin lock's way);
 *   <li>{@link #BEHIND_OWN_CLIENT}: while another owner of this client holds the lock or holds
 *       this client's ticket, parked behind it without asking Redis, until it hands the lock over
 *       or leaves.
 * </ul>
 */
public sealed interface WaitPolicy permits WaitPolicy.PubSub, WaitPolicy.Backoff, WaitPolicy.BehindOwnClient {

    /** Subscribe to the unlock channel and park until a release message or the holder's TTL. */
    WaitPolicy PUB_SUB = new PubSub();

    /** Park behind this client's holder or queued waiter (never a lock type's policy: where a pub/sub one starts). */
    WaitPolicy BEHIND_OWN_CLIENT = new BehindOwnClient();

    /** The longest a waiter parks when it cannot be sure its subscription still hears releases. */
    long UNSURE_PARK_MILLIS = 1000;

    /**
     * An attempt found the lock busy: the owner's hold count {@code before} it (the next attempt's
     * too), the message count {@code seen} read before it, how long to wait at most
     * ({@code untilMillis}: the holder's TTL, or what is left of the wait), and how many attempts
     * of this acquire failed so far.
     */
    record Busy(int before, long seen, long untilMillis, int failures) {}

    /** Whether waiters subscribe to the unlock channel, and so may take turns there. */
    boolean subscribes();

    /** Waits for the next chance of {@code waiter} after {@code busy}; the wake-up makes its next attempt. */
    void awaitNextChance(Acquisition waiter, Busy busy);

    /**
     * Capped exponential backoff with "equal jitter": at least half of each step, so contenders
     * spread out but still back off.
     */
    public static WaitPolicy backoff(Duration initial, Duration max) {
        return new Backoff(initial.toMillis(), max.toMillis());
    }

    /** Parked on the lock's {@link Turn}, subscribing first. */
    final class PubSub implements WaitPolicy {

        private PubSub() {}

        @Override
        public boolean subscribes() {
            return true;
        }

        @Override
        public void awaitNextChance(Acquisition waiter, Busy busy) {
            Turn turn = waiter.turn();
            if (turn == null) {
                // The holder may release before the subscription is in place: attempt again then.
                waiter.subscribe(busy.before(), busy.untilMillis(), subscribed -> waiter.retry(busy.before()));
                return;
            }
            long until = busy.untilMillis();
            if (waiter.subscriptionUnsure()) {
                // A connection broke since the subscription was made (a failover, a reconnect):
                // the unlock message may go to a server this client no longer listens to, so a
                // wake-up comes at least every second rather than after the holder's whole TTL.
                until = Math.min(until, UNSURE_PARK_MILLIS);
            }
            long timeout = until;
            Waiter parked = waiter.waitOn(Acquisition.State.PARKED, busy.before(),
                    wakeUp -> turn.park(waiter, wakeUp, timeout, busy.seen()));
            waiter.parkedAfterBusy(parked);
        }

        @Override
        public String toString() {
            return "pub/sub";
        }
    }

    /** On a timer, by backoff; never subscribes. */
    final class Backoff implements WaitPolicy {

        private final long initialMillis;
        private final long maxMillis;

        private Backoff(long initialMillis, long maxMillis) {
            this.initialMillis = initialMillis;
            this.maxMillis = maxMillis;
        }

        @Override
        public boolean subscribes() {
            return false;
        }

        /** The pause before the next attempt, after {@code failedAttempts} (1 or more) failed ones. */
        long pauseMillis(int failedAttempts) {
            int doublings = Math.min(failedAttempts - 1, 30);
            long ceiling = Math.min(maxMillis, initialMillis << doublings);
            return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
        }

        @Override
        public void awaitNextChance(Acquisition waiter, Busy busy) {
            pause(waiter, busy.before(), Math.min(Math.max(1, pauseMillis(busy.failures())), busy.untilMillis()));
        }

        /** Wakes {@code waiter} after {@code millis}, for its next attempt; a message cannot. */
        static void pause(Acquisition waiter, int before, long millis) {
            Waiter paused = waiter.waitOn(Acquisition.State.PAUSED, before,
                    wakeUp -> Waiter.timed(waiter.client().timer(), wakeUp, millis));
            if (waiter.cancelled()) {
                paused.fire();
            }
        }

        @Override
        public String toString() {
            return "backoff " + initialMillis + ".." + maxMillis + " ms";
        }
    }

    /**
     * Behind this client's holder or queued waiter, without asking Redis: the holder's release
     * hands the lock over to it, or one of them leaving wakes it, and it then asks Redis itself.
     * Wakes at the latest when the holder's lease as this client knows it ends.
     */
    final class BehindOwnClient implements WaitPolicy {

        private BehindOwnClient() {}

        @Override
        public boolean subscribes() {
            return true;
        }

        @Override
        public void awaitNextChance(Acquisition waiter, Busy busy) {
            waiter.subscribe(busy.before(), busy.untilMillis(), turn -> park(waiter, turn));
        }

        private static void park(Acquisition waiter, Turn turn) {
            long seen = turn.messages();
            long leftNanos = waiter.leftNanos();
            if (leftNanos <= 0 || waiter.cancelled()) {
                waiter.giveUp();
                return;
            }
            Watchdog watchdog = waiter.client().watchdog();
            long holderLease = waiter.ownClientsHolderLeaseMillis();
            long untilLook = Math.min(TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1,
                    holderLease >= 0 ? holderLease + 1 : watchdog.leaseMillis());
            Waiter parked = waiter.waitOn(Acquisition.State.PARKED, 0,
                    wakeUp -> turn.park(waiter, wakeUp, untilLook, seen));
            // The holder may have released, or the queued waiter left, before this waiter was
            // parked where they look for one: then it asks Redis itself.
            if (waiter.cancelled() || !waiter.busyHere()) {
                parked.fire();
            }
        }

        @Override
        public String toString() {
            return "behind this client's holder";
        }
    }
}
