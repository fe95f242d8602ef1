package io.relock.demo;

import io.relock.LeaderElection;
import io.relock.LeaderInfo;
import io.relock.Relock;
import io.relock.testkit.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * A job that must run once per period on one of three instances (child JVMs,
 * {@link OneNodeJobMain}), whose triggers fire 0, 150 and 300 ms into each period. (a) A plain
 * lock with {@code tryLock(0)}: the job takes 50 ms, so the lock is free again when the next
 * instance's trigger fires, and the job runs again in the same period. (b) The same lock released
 * with {@code unlock(holdAtLeast)}: it stays held for 900 ms, and the later triggers skip. (c)
 * Leader election: only the leader runs the job; the leader is frozen with SIGSTOP past its
 * lease, another instance is elected with a higher term, and the resumed one hears its
 * {@code onRevoked} and runs no job: it asks {@code currentLeadership()} before each run.
 */
final class OneNodeJob implements Scenario {

    static final String TITLE = "One node does it: a job that must run once per period on three instances";

    private static final int INSTANCES = 3;
    private static final long[] OFFSETS = {0, 150, 300};
    private static final long PERIOD = 1000;
    private static final int PERIODS = 8;
    private static final int ELECTION_PERIODS = 10;
    private static final long JOB = 50;
    private static final Duration HOLD_AT_LEAST = Duration.ofMillis(900);
    /** The instances' lease: short, so that a frozen leader is replaced within two periods. */
    private static final Duration WATCHDOG = Duration.ofMillis(1500);
    /** The period in which the leader is frozen. */
    private static final int FREEZE_AT = 2;
    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    private final DemoRedis redis;

    OneNodeJob(DemoRedis redis) {
        this.redis = redis;
    }

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return "a lock alone lets a short job run again in the same period; holdAtLeast or a leader election runs it"
                + " once, and a leader frozen past its lease is revoked and stays out.";
    }

    @Override
    public void run(Report.Section section) throws Exception {
        section.note("3 instances (child JVMs), period " + Report.millis(PERIOD) + ", triggers at +0/+150/+300 ms,"
                + " job " + JOB + " ms");
        int[] plain = runsPerPeriod(runPart("plain", PERIODS, null, section), PERIODS);
        int plainDuplicates = duplicates(plain);
        section.figure("(a) tryLock(0), unlock()", describe(plain) + ": " + plainDuplicates
                + " duplicate runs, the problem");
        int[] hold = runsPerPeriod(runPart("hold", PERIODS, null, section), PERIODS);
        section.figure("(b) unlock(holdAtLeast " + Report.human(HOLD_AT_LEAST) + ")", describe(hold) + ": "
                + duplicates(hold) + " duplicate runs");
        Freeze freeze = new Freeze();
        List<Run> electionRuns = runPart("leader", ELECTION_PERIODS, freeze, section);
        int[] leader = runsPerPeriod(electionRuns, ELECTION_PERIODS);
        // Runs in its old term only: re-elected later (a new, higher term), it may lead again.
        long resumedRuns = electionRuns.stream()
                .filter(run -> run.instance() == freeze.instance && run.period() > freeze.period
                        && run.term() <= freeze.oldTerm)
                .count();
        section.figure("(c) leader election", describe(leader) + ": " + duplicates(leader) + " duplicate runs");
        section.figure("  terms that ran it, in order", electionRuns.stream()
                .sorted(Comparator.comparingInt(Run::period)).map(run -> Long.toString(run.term())).distinct()
                .collect(Collectors.joining(", "))
                + " (a period with no run: the frozen leader's lease was running out)");
        section.figure("  old leader's runs, old term", resumedRuns + " after the freeze");

        boolean a = plainDuplicates > 0;
        boolean b = exactlyOnce(hold);
        boolean c = duplicates(leader) == 0 && resumedRuns == 0 && freeze.newTerm > freeze.oldTerm
                && freeze.revokedTerm == freeze.oldTerm
                && electionRuns.stream().anyMatch(run -> run.term() >= freeze.newTerm);
        section.verdict(a && b && c,
                "(a) a plain lock ran the job " + plainDuplicates + " extra times; (b) holdAtLeast ran it once"
                        + " in each of " + PERIODS + " periods; (c) the leader ran it at most once per period,"
                        + " the frozen leader was revoked (term " + freeze.oldTerm + " < " + freeze.newTerm
                        + ") and ran nothing in its old term after",
                "(a) " + plainDuplicates + " duplicates (expected some), (b) " + describe(hold) + ", (c) "
                        + describe(leader) + ", runs in the old term after the freeze " + resumedRuns
                        + ", terms " + freeze.oldTerm + " -> "
                        + freeze.newTerm + ", revoked " + freeze.revokedTerm);
    }

    /** One run of the job: by which instance (from 0), in which period, in which term (0 without election). */
    private record Run(int instance, int period, long term) {}

    /** What happened to the frozen leader in part (c). */
    private static final class Freeze {
        int instance = -1;
        long oldTerm = -1;
        long newTerm = -1;
        long revokedTerm = -2;
        int period = Integer.MAX_VALUE;
    }

    private List<Run> runPart(String mode, int periods, Freeze freeze, Report.Section section) throws Exception {
        List<ChildJvm> children = new ArrayList<>();
        // Who leads, as any client can read it from Redis; connected before the periods start.
        try (Relock observer = redis.newClient();
                LeaderElection election = observer.getLeaderElection("one-node-job")) {
            List<String> clientIds = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                ChildJvm child = ChildJvm.start(OneNodeJobMain.class, redis.keyPrefix(), mode,
                        Long.toString(OFFSETS[i]), Long.toString(PERIOD), Integer.toString(periods), Long.toString(JOB),
                        Long.toString(WATCHDOG.toMillis()), Long.toString(HOLD_AT_LEAST.toMillis()));
                children.add(child);
                child.send(redis.uri());
            }
            for (ChildJvm child : children) {
                clientIds.add(child.awaitLine("READY", PROMPTLY).substring("READY ".length()));
            }
            // The first period starts a little later, on the wall clock every instance reads.
            long start = System.currentTimeMillis() + 500;
            for (ChildJvm child : children) {
                child.send("start " + start);
            }
            if (freeze != null) {
                freezeLeader(children, clientIds, start, freeze, election, section);
            }
            List<Run> runs = new ArrayList<>();
            for (ChildJvm child : children) {
                child.awaitLine("DONE", PROMPTLY);
            }
            for (ChildJvm child : children) {
                child.send("exit");
            }
            for (int i = 0; i < INSTANCES; i++) {
                children.get(i).awaitExit(PROMPTLY);
                for (String line : children.get(i).output().split("\n")) {
                    if (line.startsWith("RUN ")) {
                        String[] fields = line.split(" ");
                        runs.add(new Run(i, Integer.parseInt(fields[1]), Long.parseLong(fields[2])));
                    }
                }
            }
            return runs;
        } finally {
            for (ChildJvm child : children) {
                child.close();
            }
        }
    }

    private void freezeLeader(List<ChildJvm> children, List<String> clientIds, long start, Freeze freeze,
            LeaderElection election, Report.Section section) throws Exception {
        // Pacing: into the freeze period, after its triggers.
        long wait = start + FREEZE_AT * PERIOD + 500 - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
        LeaderInfo old = election.leader().orElseThrow(() -> new IllegalStateException("nobody leads"));
        freeze.instance = clientIds.indexOf(old.clientId());
        freeze.oldTerm = old.term();
        ChildJvm leader = children.get(freeze.instance);
        leader.pause();
        long pausedAt = System.nanoTime();
        // Every trigger of the frozen instance in a later period fires after it is resumed.
        freeze.period = (int) ((System.currentTimeMillis() - start) / PERIOD);
        section.note("(c) instance " + (freeze.instance + 1) + " leads with term " + old.term()
                + "; frozen with SIGSTOP in period " + freeze.period + " (lease " + Report.human(WATCHDOG) + ")");
        AtomicReference<Optional<LeaderInfo>> seen = new AtomicReference<>(Optional.empty());
        try {
            Poll.until(PROMPTLY, Duration.ofMillis(20), () -> {
                seen.set(election.leader().filter(info -> info.term() > old.term()));
                return seen.get().isPresent();
            });
            Optional<LeaderInfo> next = seen.get();
            long electedAfter = Duration.ofNanos(System.nanoTime() - pausedAt).toMillis();
            freeze.newTerm = next.map(LeaderInfo::term).orElse(-1L);
            int nextInstance = next.map(info -> clientIds.indexOf(info.clientId())).orElse(-2);
            section.note("(c) instance " + (nextInstance + 1) + " elected with term " + freeze.newTerm + ", "
                    + Report.millis(electedAfter) + " after the freeze");
            // Kept frozen for one more period, so that its scheduler has triggers to catch up on when it resumes.
            Thread.sleep(PERIOD);
        } finally {
            leader.resume();
        }
        String revoked = leader.awaitLine("REVOKED", PROMPTLY);
        freeze.revokedTerm = Long.parseLong(revoked.substring("REVOKED ".length()));
        section.note("(c) instance " + (freeze.instance + 1) + " resumed after " + Report.millis(
                Duration.ofNanos(System.nanoTime() - pausedAt).toMillis()) + ": onRevoked for term "
                + freeze.revokedTerm + ", older than " + freeze.newTerm);
    }

    private static int[] runsPerPeriod(List<Run> runs, int periods) {
        int[] counts = new int[periods];
        for (Run run : runs) {
            counts[run.period()]++;
        }
        return counts;
    }

    private static int duplicates(int[] counts) {
        int duplicates = 0;
        for (int count : counts) {
            duplicates += Math.max(0, count - 1);
        }
        return duplicates;
    }

    private static boolean exactlyOnce(int[] counts) {
        for (int count : counts) {
            if (count != 1) {
                return false;
            }
        }
        return true;
    }

    /** Runs per period, such as {@code runs per period [3 3 3 3]}. */
    private static String describe(int[] counts) {
        StringBuilder text = new StringBuilder("runs per period [");
        for (int i = 0; i < counts.length; i++) {
            text.append(i == 0 ? "" : " ").append(counts[i]);
        }
        return text.append(']').toString();
    }
}
