package io.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * The parking of waiters on an unlock channel, without Redis: a timer the test fires by hand, and
 * Lincheck's model checker over every interleaving of parks, messages and timeouts of a few
 * threads, checking that no wake-up is lost or doubled.
 */
class ParkingTest {

    @Test
    void aMessageWakesTheLongestParkedWaiterOnly() {
        Parking parking = new Parking(new ManualTimer());
        List<String> woken = new ArrayList<>();
        parking.park(() -> woken.add("first"), 1000, parking.messages());
        parking.park(() -> woken.add("second"), 1000, parking.messages());
        assertThat(parking.signal(false)).isEqualTo(1);
        assertThat(woken).containsExactly("first");
        assertThat(parking.parked()).isEqualTo(1);
    }

    @Test
    void aWaiterThatMissedAnUnlockSinceItsAttemptTriesAgainAtOnce() {
        Parking parking = new Parking(new ManualTimer());
        long seen = parking.messages();
        assertThat(parking.signal(false)).as("nobody parked yet").isZero();
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, seen);
        assertThat(woken).hasValue(1);
        assertThat(parking.parked()).isZero();
    }

    @Test
    void anUnlockThatWokeNobodySendsOnlyOneOfTheWaitersThatMissedItBack() {
        Parking parking = new Parking(new ManualTimer());
        long first = parking.messages();
        long second = parking.messages();
        assertThat(parking.signal(false)).as("nobody parked yet").isZero();
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, first);
        parking.park(woken::incrementAndGet, 1000, second);
        assertThat(woken).as("one release lets one owner in: one retry").hasValue(1);
        assertThat(parking.parked()).isEqualTo(1);
        parking.signal(false);
        assertThat(woken).as("the next release wakes the parked one").hasValue(2);
    }

    @Test
    void eachUnlockThatWokeNobodySendsOneWaiterBack() {
        Parking parking = new Parking(new ManualTimer());
        long seen = parking.messages();
        parking.signal(false);
        parking.signal(false);
        AtomicInteger woken = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            parking.park(woken::incrementAndGet, 1000, seen);
        }
        assertThat(woken).hasValue(2);
        assertThat(parking.parked()).isEqualTo(1);
    }

    @Test
    void aKeptUnlockIsOnlyForWaitersThatAttemptedBeforeIt() {
        Parking parking = new Parking(new ManualTimer());
        long before = parking.messages();
        parking.signal(false);
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        assertThat(woken).as("its attempt came after the release").hasValue(0);
        parking.park(woken::incrementAndGet, 1000, before);
        assertThat(woken).as("the waiter that missed it takes it").hasValue(1);
    }

    @Test
    void theNewestUnlockIsKeptWhenManyWokeNobody() {
        Parking parking = new Parking(new ManualTimer());
        long seen = parking.messages();
        for (int i = 0; i < Parking.KEPT_MESSAGES + 10; i++) {
            parking.signal(false);
        }
        long beforeLast = parking.messages() - 1;
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, beforeLast);
        assertThat(woken).as("the last release is kept").hasValue(1);
        for (int i = 0; i < Parking.KEPT_MESSAGES; i++) {
            parking.park(woken::incrementAndGet, 1000, seen);
        }
        assertThat(woken).as("only " + Parking.KEPT_MESSAGES + " are kept").hasValue(Parking.KEPT_MESSAGES);
        assertThat(parking.parked()).isEqualTo(1);
    }

    @Test
    void aReadUnlockReplacesTheKeptUnlocksForEveryone() {
        Parking parking = new Parking(new ManualTimer());
        long seen = parking.messages();
        parking.signal(false);
        parking.signal(true);
        AtomicInteger woken = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            parking.park(woken::incrementAndGet, 1000, seen);
        }
        assertThat(woken).hasValue(3);
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        assertThat(parking.parked()).as("nothing kept past the read-unlock").isEqualTo(1);
    }

    @Test
    void aWaiterThatMissedAReadUnlockSinceItsAttemptTriesAgainAtOnce() {
        Parking parking = new Parking(new ManualTimer());
        long first = parking.messages();
        long second = parking.messages();
        assertThat(parking.signal(true)).as("nobody parked yet").isZero();
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, first);
        parking.park(woken::incrementAndGet, 1000, second);
        assertThat(woken).as("both waiters that were between attempt and park").hasValue(2);
    }

    @Test
    void aWaiterThatSawTheLastMessageParks() {
        Parking parking = new Parking(new ManualTimer());
        parking.signal(false);
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        assertThat(woken).hasValue(0);
        assertThat(parking.parked()).isEqualTo(1);
    }

    @Test
    void aReadUnlockWakesEveryone() {
        Parking parking = new Parking(new ManualTimer());
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        assertThat(parking.signal(true)).isEqualTo(2);
        assertThat(woken).hasValue(2);
        assertThat(parking.parked()).isZero();
    }

    @Test
    void theTimeoutWakesAWaiterOnce() throws Exception {
        ManualTimer timer = new ManualTimer();
        Parking parking = new Parking(timer);
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        timer.elapse();
        assertThat(woken).hasValue(1);
        assertThat(parking.parked()).isZero();
        assertThat(parking.signal(false)).as("nobody parked any more").isZero();
        assertThat(woken).hasValue(1);
    }

    @Test
    void aWaiterWokenByAMessageCancelsItsTimeout() throws Exception {
        ManualTimer timer = new ManualTimer();
        Parking parking = new Parking(timer);
        AtomicInteger woken = new AtomicInteger();
        parking.park(woken::incrementAndGet, 1000, parking.messages());
        parking.signal(false);
        assertThat(timer.pending).allMatch(ManualTimer.ManualTimeout::isCancelled);
        timer.elapse();
        assertThat(woken).hasValue(1);
    }

    @Test
    void noInterleavingLosesOrDoublesAWakeUp() {
        new ModelCheckingOptions().iterations(20).invocationsPerIteration(250).threads(3).actorsPerThread(3)
                .check(Model.class);
    }

    /**
     * The model Lincheck drives: waiters that note the message count and then park (as after a
     * failed attempt), single messages, read-unlock messages and timeouts (a parked waiter fired
     * from outside) from several threads. In the end every waiter was woken at most once, and
     * every waiter not woken is still parked (none is forgotten).
     */
    public static class Model {

        private final Parking parking = new Parking(new ManualTimer());
        private final ConcurrentLinkedQueue<Waiter> waiters = new ConcurrentLinkedQueue<>();
        private final List<AtomicInteger> wakeUpsPerPark = new java.util.concurrent.CopyOnWriteArrayList<>();

        /** Parks; under the model's lock so that its queue of waiters is in the order they parked. */
        @Operation
        public void park() {
            synchronized (waiters) {
                AtomicInteger wakeUps = new AtomicInteger();
                wakeUpsPerPark.add(wakeUps);
                waiters.add(parking.park(wakeUps::incrementAndGet, 60_000, parking.messages()));
            }
        }

        // Messages answer nothing here: a waiter that missed one runs at once instead of
        // parking, which no sequential order of whole operations describes, so the model checks
        // the invariants below in every interleaving rather than linearizability.
        @Operation
        public void signal() {
            parking.signal(false);
        }

        @Operation
        public void signalAll() {
            parking.signal(true);
        }

        /** The oldest waiter's timeout (or cancel) fires, concurrently with messages. */
        @Operation
        public void timeOutOne() {
            synchronized (waiters) {
                Waiter waiter = waiters.poll();
                if (waiter != null) {
                    waiter.fire();
                }
            }
        }

        @Validate
        public void everyParkIsWokenAtMostOnceAndNoneIsForgotten() {
            long woken = 0;
            for (AtomicInteger wakeUps : wakeUpsPerPark) {
                if (wakeUps.get() > 1) {
                    throw new IllegalStateException("a waiter was woken " + wakeUps.get() + " times");
                }
                woken += wakeUps.get();
            }
            if (woken + parking.parked() != wakeUpsPerPark.size()) {
                throw new IllegalStateException(woken + " woken + " + parking.parked() + " parked != "
                        + wakeUpsPerPark.size() + " parks");
            }
        }
    }
}
