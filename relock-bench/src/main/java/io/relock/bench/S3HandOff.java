package io.relock.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

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
 */
final class S3HandOff implements Scenario {

    static final long HOLD_MILLIS = 2;
    static final String LOCK_NAME = "bench:s3:handoff";

    /** How long a participant that took the lock waits for the release before it to be noted. */
    private static final long NOTE_TIMEOUT_NANOS = Load.SETTLE_TIMEOUT.toNanos();

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

    /** One party of the relay: its own {@code lock()} and {@code unlock()} on the relay's name. */
    interface Participant {

        /** Blocks in {@code lock()}; returns {@link System#nanoTime()} at its return. */
        long acquire() throws Exception;

        /** Notes {@link System#nanoTime()}, then calls {@code unlock()}; returns the noted time. */
        long release() throws Exception;
    }

    @Override
    public String id() {
        return "S3";
    }

    @Override
    public String title() {
        return "hand-off: unlock() to the next waiter's lock() return";
    }

    /** All five, quick or not: each carries a goal, and S3's phases are short. */
    @Override
    public List<String> cases(boolean quick) {
        return List.of("S3/w1", "S3/w8", "S3/w1c", "S3/w8c", "S3/w1j");
    }

    /**
     * Every case of S3 runs half the run's warm-up and window (1 s and 2.5 s by default), to keep
     * the whole run near 12 minutes with five cases and three libraries: a hand-off takes at
     * least the {@value #HOLD_MILLIS} ms hold, so it runs at about 400 per second whatever the
     * library, and 2.5 s still give about a thousand hand-offs for the percentiles. All cases
     * alike, as they are read against each other (same client, other client, other JVM).
     */
    @Override
    public Load.Timing timing(String caseId, Load.Timing given) {
        return shorter(given);
    }

    /** S3's phases, from the run's. */
    static Load.Timing shorter(Load.Timing given) {
        return new Load.Timing(given.warmup().dividedBy(2), given.window().dividedBy(2), given.count());
    }

    private static Placement placement(String caseId) {
        String shape = caseId.substring("S3/w".length());
        for (Placement candidate : Placement.values()) {
            if (!candidate.suffix.isEmpty() && shape.endsWith(candidate.suffix)) {
                return candidate;
            }
        }
        return Placement.SAME_CLIENT;
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) throws Exception {
        Placement placement = placement(caseId);
        String shape = caseId.substring("S3/w".length());
        int waiters = Integer.parseInt(shape.substring(0, shape.length() - placement.suffix.length()));
        if (placement == Placement.OTHER_JVM && waiters != 1) {
            throw new IllegalArgumentException("a waiter in another JVM is one waiter: " + caseId);
        }
        String where = switch (placement) {
            case SAME_CLIENT -> ", same client";
            case OWN_CLIENTS -> waiters == 1 ? " on another client" : " on " + waiters + " other clients";
            case OTHER_JVM -> " in another JVM";
        };
        CaseResult result = new CaseResult(caseId, "S3 hand-off, " + waiters + (waiters == 1 ? " waiter" : " waiters")
                + where);
        int threads = waiters + 1;
        Participant[] participants = new Participant[threads];
        List<LockLibrary> clients = new ArrayList<>();
        PeerProcess peer = null;
        try {
            for (int i = 0; i < threads; i++) {
                if (placement == Placement.OTHER_JVM && i > 0) {
                    peer = PeerProcess.start(context.library(), context.uri(), LOCK_NAME, context.heap());
                    participants[i] = peer;
                    continue;
                }
                if (clients.isEmpty() || placement != Placement.SAME_CLIENT) {
                    clients.add(context.connect());
                }
                participants[i] = new Local(clients.get(clients.size() - 1).lock(LOCK_NAME));
            }
            result.detail("client_instances", clients.size() + (peer != null ? 1 : 0));
            Relay relay = new Relay();
            PeerProcess other = peer;
            Load.Outcome outcome = Load.run(threads, worker -> relay.cycle(participants[worker.index], worker),
                    timing(caseId, context.timing()), List.of(context.admin()),
                    other == null ? () -> 0 : other::cpuNanos);
            return result.load(outcome, Metric.HANDOFFS_PER_S, Metric.HANDOFF_P50_US, Metric.HANDOFF_P99_US);
        } finally {
            if (peer != null) {
                peer.close();
            }
            clients.forEach(LockLibrary::close);
        }
    }

    /** A participant in this JVM. */
    private record Local(Lock lock) implements Participant {

        @Override
        public long acquire() {
            lock.lock();
            return System.nanoTime();
        }

        @Override
        public long release() {
            long releasedAt = System.nanoTime();
            lock.unlock();
            return releasedAt;
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

        private long holds; // guarded by this
        private int holder = -1; // guarded by this: who took the latest hold
        private final Map<Long, Long> releasedAt = new HashMap<>(); // guarded by this: hold number -> time

        long cycle(Participant participant, Load.Worker worker) throws Exception {
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
            long until = acquiredAt + TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS);
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            long released = participant.release();
            synchronized (this) {
                releasedAt.put(hold, released);
                notifyAll();
                // Let a waiter take it before competing again (blocked, not polling: the waiters
                // need the CPU). Stop waiting once the phase is no longer the one this cycle
                // started in: the others may be pausing, not waiting.
                while (holds == hold && worker.phase() == started) {
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
    }
}
