package io.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * S3, hand-off: one holder and 1 or 8 waiters blocked in {@code lock()} on one name. The holder
 * keeps the lock {@value #HOLD_MILLIS} ms (so every waiter is parked on the unlock message),
 * notes the time and calls {@code unlock()}; the hand-off time is from there to the return of
 * the next {@code lock()} in another participant. A participant that released only asks again
 * once someone else got the lock, so each release is a real hand-off to a waiter.
 *
 * <p>Where the participants live, by case:
 * <ul>
 *   <li>{@code w1}, {@code w8}: threads of one client instance;</li>
 *   <li>{@code w1c}, {@code w8c}: each participant its own client instance (2 or 9 clients in
 *       the worker JVM), as when the waiters are other processes of a service: every hand-off
 *       goes from one client to another;</li>
 *   <li>{@code w1j}: two participants, the second in another JVM ({@link Peer}) with its own
 *       client: every hand-off crosses processes. Both JVMs read one clock (checked at start),
 *       and client CPU is the sum of both.</li>
 * </ul>
 * Two variants of {@code w1c} (issue 25), read against the same peers:
 * <ul>
 *   <li>{@code w1c5}: each hold lasts 5 ± 1 ms (uniformly random from {@value #LONG_HOLD_MIN_MILLIS}
 *       to {@value #LONG_HOLD_MAX_MILLIS} ms), and the holder releases only once every other
 *       participant is inside {@code lock()}: it announced the call (a volatile field set just
 *       before it) and its thread is parked ({@link Thread.State#WAITING} or
 *       {@link Thread.State#TIMED_WAITING}). No release can then go to a waiter that has not yet
 *       asked;</li>
 *   <li>{@code w1cr}: the releaser asks again at once ({@code lock()} right after its
 *       {@code unlock()}), so the waiter competes with a participant re-queueing, not with an
 *       idle one. A lock may then go back to the releaser: that is an acquisition but no
 *       hand-off (no latency recorded), and the case reports acquisitions/s, hand-offs/s and
 *       the share of acquisitions that were hand-offs.</li>
 * </ul>
 */
final class S3HandOff implements Scenario {

    static final long HOLD_MILLIS = 2;
    static final long LONG_HOLD_MIN_MILLIS = 4;
    static final long LONG_HOLD_MAX_MILLIS = 6;
    static final String LOCK_NAME = "bench:s3:handoff";

    /** How long a participant that took the lock waits for the release before it to be noted. */
    private static final long NOTE_TIMEOUT_NANOS = Load.SETTLE_TIMEOUT.toNanos();

    /**
     * How often a holder that is due to release looks again whether the waiters are inside
     * {@code lock()} ({@code w1c5}); a waiter normally got there during the hold, so this is
     * rarely needed, and a check costs a {@code getState()}.
     */
    private static final long INSIDE_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private static final Pattern CASE = Pattern.compile("S3/w(\\d+)([cj]?)(5?)(r?)");

    /** Where the participants of a case live. */
    enum Placement {
        /** Threads of one client. */
        SAME_CLIENT(""),
        /** Each participant its own client, in the worker JVM. */
        OWN_CLIENTS("c"),
        /** One participant here, the other in another JVM. */
        OTHER_JVM("j");

        /** What follows the number of waiters in the case id. */
        private final String suffix;

        Placement(String suffix) {
            this.suffix = suffix;
        }
    }

    /**
     * A case's shape, from its id: {@code w<waiters>[c|j][5][r]}.
     *
     * @param longHolds holds of 4 to 6 ms, released once every waiter is inside {@code lock()} ({@code 5})
     * @param reasks the releaser calls {@code lock()} again right after {@code unlock()} ({@code r})
     */
    record Shape(int waiters, Placement placement, boolean longHolds, boolean reasks) {

        /** @throws IllegalArgumentException for an id that is not an S3 case, or a shape the relay cannot run */
        static Shape of(String caseId) {
            Matcher matcher = CASE.matcher(caseId);
            if (!matcher.matches()) {
                throw new IllegalArgumentException("not an S3 case: " + caseId);
            }
            Placement placement = Placement.SAME_CLIENT;
            for (Placement candidate : Placement.values()) {
                if (candidate.suffix.equals(matcher.group(2))) {
                    placement = candidate;
                }
            }
            Shape shape = new Shape(Integer.parseInt(matcher.group(1)), placement, !matcher.group(3).isEmpty(),
                    !matcher.group(4).isEmpty());
            if (placement == Placement.OTHER_JVM && (shape.waiters != 1 || shape.longHolds)) {
                // Whether a thread of another JVM is parked in lock() cannot be seen from here.
                throw new IllegalArgumentException("a waiter in another JVM is one waiter, with 2 ms holds: " + caseId);
            }
            return shape;
        }

        /** The case's title after "S3 hand-off, ". */
        String text() {
            String where = switch (placement) {
                case SAME_CLIENT -> ", same client";
                case OWN_CLIENTS -> waiters == 1 ? " on another client" : " on " + waiters + " other clients";
                case OTHER_JVM -> " in another JVM";
            };
            return waiters + (waiters == 1 ? " waiter" : " waiters") + where
                    + (longHolds ? ", holds of 5 ± 1 ms released once the waiter is in lock()" : "")
                    + (reasks ? ", the releaser asks again at once" : "");
        }

        /** One hold, in nanoseconds: {@value S3HandOff#HOLD_MILLIS} ms, or uniformly 4 to 6 ms for long holds. */
        long holdNanos() {
            return longHolds ? ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(LONG_HOLD_MIN_MILLIS),
                    TimeUnit.MILLISECONDS.toNanos(LONG_HOLD_MAX_MILLIS) + 1) : TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS);
        }
    }

    /** One party of the relay: its own {@code lock()} and {@code unlock()} on the relay's name. */
    interface Participant {

        /** Blocks in {@code lock()}; returns {@link System#nanoTime()} at its return. */
        long acquire() throws Exception;

        /** Notes {@link System#nanoTime()}, then calls {@code unlock()}; returns the noted time. */
        long release() throws Exception;

        /**
         * Whether the participant is parked inside {@code lock()} right now.
         *
         * @throws UnsupportedOperationException where this cannot be seen (a participant in another JVM)
         */
        default boolean insideLock() {
            throw new UnsupportedOperationException("cannot see whether " + this + " is inside lock()");
        }
    }

    @Override
    public String id() {
        return "S3";
    }

    @Override
    public String title() {
        return "hand-off: unlock() to the next waiter's lock() return";
    }

    /** All seven, quick or not: each but {@code w1cr} carries a goal, and S3's phases are short. */
    @Override
    public List<String> cases(boolean quick) {
        return List.of("S3/w1", "S3/w8", "S3/w1c", "S3/w1c5", "S3/w1cr", "S3/w8c", "S3/w1j");
    }

    /**
     * Hand-offs a case warms up for with the default 2 s warm-up (scaled with {@code --warmup}):
     * the JIT compiles a hand-off's path only after a couple of thousand of them. A two-client
     * harness measured Relock's cross-client hand-off p50 at 471 µs over the first 2 000 and
     * 253–289 µs over the next 6 000, and with a 1 s warm-up most of a 2.5 s window ran before
     * compilation.
     */
    static final int WARMUP_HAND_OFFS = 3000;
    /** What a hand-off adds to its hold, about, to turn hand-offs into warm-up time. */
    private static final long HAND_OFF_ALLOWANCE_MICROS = 500;

    /**
     * Every case of S3 warms up for {@value #WARMUP_HAND_OFFS} hand-offs (7.5 s at
     * {@value #HOLD_MILLIS} ms holds, 16.5 s at {@code w1c5}'s 5 ms; the run's warm-up, 2 s by
     * default, scales it) and measures half the run's window (2.5 s by default): a hand-off takes
     * at least its hold, so a case runs at about 400 hand-offs per second whatever the library
     * (about 180 with 5 ms holds), and 2.5 s still give about a thousand (450) for the
     * percentiles. All cases alike, as they are read against each other (same client, other
     * client, other JVM).
     */
    @Override
    public Load.Timing timing(String caseId, Load.Timing given) {
        long holdMicros = Shape.of(caseId).longHolds()
                ? (LONG_HOLD_MIN_MILLIS + LONG_HOLD_MAX_MILLIS) * 1000 / 2 : HOLD_MILLIS * 1000;
        return timing(given, holdMicros);
    }

    /** S3's phases, from the run's, for holds of about {@code holdMicros}. */
    static Load.Timing timing(Load.Timing given, long holdMicros) {
        Duration warmup = Duration.ofMillis(Math.round(
                warmupHandOffs(given) * (holdMicros + HAND_OFF_ALLOWANCE_MICROS) / 1000.0));
        return new Load.Timing(warmup, given.window().dividedBy(2), given.count());
    }

    /** About how many hand-offs each case warms up for, given the run's phases. */
    static long warmupHandOffs(Load.Timing given) {
        return Math.round(WARMUP_HAND_OFFS * given.warmup().toMillis() / (double) Options.DEFAULT_WARMUP.toMillis());
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) throws Exception {
        Shape shape = Shape.of(caseId);
        CaseResult result = new CaseResult(caseId, "S3 hand-off, " + shape.text());
        int threads = shape.waiters() + 1;
        Participant[] participants = new Participant[threads];
        List<LockLibrary> clients = new ArrayList<>();
        PeerProcess peer = null;
        try {
            for (int i = 0; i < threads; i++) {
                if (shape.placement() == Placement.OTHER_JVM && i > 0) {
                    peer = PeerProcess.start(context.library(), context.uri(), LOCK_NAME, context.heap());
                    participants[i] = peer;
                    continue;
                }
                if (clients.isEmpty() || shape.placement() != Placement.SAME_CLIENT) {
                    clients.add(context.connect());
                }
                participants[i] = new Local(clients.get(clients.size() - 1).lock(LOCK_NAME));
            }
            result.detail("client_instances", clients.size() + (peer != null ? 1 : 0));
            Relay relay = new Relay(shape, participants);
            PeerProcess other = peer;
            Load.Outcome outcome = Load.run(threads, worker -> relay.cycle(worker),
                    timing(caseId, context.timing()), List.of(context.admin()),
                    other == null ? () -> 0 : other::cpuNanos);
            if (shape.longHolds()) {
                result.detail("releases_held_for_waiters", relay.heldForWaiters.get());
            }
            if (!shape.reasks()) {
                return result.load(outcome, Metric.HANDOFFS_PER_S, Metric.HANDOFF_P50_US, Metric.HANDOFF_P99_US);
            }
            // Not every acquisition is a hand-off here: the latencies are the hand-offs'.
            long handOffs = outcome.latency().getTotalCount();
            return result.load(outcome, Metric.ACQUISITIONS_PER_S, Metric.HANDOFF_P50_US, Metric.HANDOFF_P99_US)
                    .metric(Metric.HANDOFFS_PER_S, outcome.seconds() > 0 ? handOffs / outcome.seconds() : Double.NaN)
                    .metric(Metric.HANDOFF_SHARE, outcome.ops() > 0 ? (double) handOffs / outcome.ops() : Double.NaN)
                    .detail("hand_offs", handOffs);
        } finally {
            if (peer != null) {
                peer.close();
            }
            clients.forEach(LockLibrary::close);
        }
    }

    /**
     * A participant in this JVM. It announces a {@code lock()} call by naming its thread just
     * before it, so that a holder can see that it is parked in there.
     */
    private static final class Local implements Participant {

        private final Lock lock;
        private volatile Thread calling;

        Local(Lock lock) {
            this.lock = lock;
        }

        @Override
        public long acquire() {
            calling = Thread.currentThread();
            try {
                lock.lock();
                return System.nanoTime();
            } finally {
                calling = null;
            }
        }

        @Override
        public long release() {
            long releasedAt = System.nanoTime();
            lock.unlock();
            return releasedAt;
        }

        @Override
        public boolean insideLock() {
            Thread thread = calling;
            if (thread == null) {
                return false;
            }
            Thread.State state = thread.getState();
            return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
        }
    }

    /**
     * The shared state of the relay: the holds in the order they were taken, who took each, and
     * when each was released. A hold is registered before it is released, so the order of
     * registration is the order of the holds even when a participant is in another JVM; the
     * release time of a hold may be noted a little after the next holder got the lock (the
     * next one's {@code lock()} can return before the previous one's {@code unlock()}), so the
     * next holder reads it at the end of its cycle.
     */
    private static final class Relay {

        private final Shape shape;
        private final Participant[] participants;
        /** Releases that waited for a waiter to get inside {@code lock()} after the hold ({@code w1c5}). */
        final AtomicLong heldForWaiters = new AtomicLong();
        private long holds; // guarded by this
        private int holder = -1; // guarded by this: who took the latest hold
        private final Map<Long, Long> releasedAt = new HashMap<>(); // guarded by this: hold number -> time

        Relay(Shape shape, Participant[] participants) {
            this.shape = shape;
            this.participants = participants;
        }

        long cycle(Load.Worker worker) throws Exception {
            Participant participant = participants[worker.index];
            Load.Phase started = worker.phase();
            long acquiredAt = participant.acquire();
            long hold;
            int previous;
            synchronized (this) {
                hold = ++holds;
                previous = holder;
                holder = worker.index;
                notifyAll();
            }
            long until = acquiredAt + shape.holdNanos();
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            if (shape.longHolds()) {
                awaitWaitersInside(worker, started);
            }
            long released = participant.release();
            synchronized (this) {
                releasedAt.put(hold, released);
                notifyAll();
                // Unless it re-asks at once, let a waiter take it before competing again (blocked,
                // not polling: the waiters need the CPU). Stop waiting once the phase is no longer
                // the one this cycle started in: the others may be pausing, not waiting.
                while (!shape.reasks() && holds == hold && worker.phase() == started) {
                    wait(1);
                }
                if (previous < 0 || previous == worker.index) {
                    releasedAt.remove(hold - 1);
                    return -1;
                }
                long deadline = System.nanoTime() + NOTE_TIMEOUT_NANOS;
                while (!releasedAt.containsKey(hold - 1)) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new IllegalStateException("the release before hold " + hold + " was never noted");
                    }
                    wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
                return acquiredAt - releasedAt.remove(hold - 1);
            }
        }

        /**
         * Returns once every other participant is parked inside {@code lock()}, or once the phase
         * is no longer {@code started} (the others may then be pausing instead of asking). The
         * waiters announced the call during the hold, so this normally returns at once.
         */
        private void awaitWaitersInside(Load.Worker worker, Load.Phase started) {
            long deadline = System.nanoTime() + NOTE_TIMEOUT_NANOS;
            boolean held = false;
            for (int i = 0; i < participants.length; i++) {
                while (i != worker.index && !participants[i].insideLock()) {
                    if (worker.phase() != started) {
                        return;
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("participant " + i + " did not get inside lock() within "
                                + Load.SETTLE_TIMEOUT.toSeconds() + " s");
                    }
                    held = true;
                    LockSupport.parkNanos(INSIDE_POLL_NANOS);
                }
            }
            if (held) {
                heldForWaiters.incrementAndGet();
            }
        }
    }
}
