package io.relock.bench;

import static io.relock.bench.FailoverFaults.DETACHED_FIRST;
import static io.relock.bench.FailoverFaults.TOPOLOGY_TIMEOUT;

import io.relock.Relock;
import io.relock.RelockException;
import io.relock.bench.FailoverFaults.Fault;
import io.relock.bench.FailoverFaults.Probe;
import io.relock.bench.FailoverOptions.Mode;
import io.relock.bench.FailoverWorkload.Phase;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The failover measurement, for longer runs than {@code FailoverMeasurementTest}: how many
 * two-holder incidents and lost holds failovers cause, without replica sync and with
 * {@code replicaSync(1, 500ms)} and {@code replicaSync(2, 500ms)}.
 *
 * <pre>
 * mvn -q -B -Pfailover -DskipTests verify -Dfailover.args="--failovers 10"
 * </pre>
 *
 * <p>It starts a Sentinel topology (one master, two replicas, three Sentinels; {@code
 * down-after} 1 s). Per mode, four clients of two threads each loop {@code tryLock} (2 s wait;
 * one thread per client on the watchdog, one with a 2 s lease) → a 1 ms busy critical section →
 * {@code unlock} over four lock names. Each critical section counts itself in and out of an
 * in-JVM counter per name; entering an occupied one is a two-holder incident. The failovers
 * alternate:
 *
 * <ul>
 *   <li><b>kill</b>: SIGKILL of the master; the Sentinels promote a replica; the killed node is
 *       restarted (empty) and made a replica of the new master;
 *   <li><b>Sentinel failover</b> ({@code SENTINEL FAILOVER}): the old master keeps running, still
 *       a master, and Relock's clients stay connected to it. Half of them have their connections
 *       to it closed (as a network blip or a restart would) and reconnect through Sentinel to the
 *       new master; the rest keep locking on the old one until Sentinel demotes it by itself
 *       (about ten seconds later, closing its client connections) — a split brain.
 * </ul>
 *
 * <p>Before each failover a probe client takes a lock with a 60 s lease and, right after, looks
 * for it on the promoted master (on the server itself); after a Sentinel failover it also takes
 * one on the deposed master, and with replica sync on closes its connection there while the
 * acquire's {@code WAIT} blocks (the deposed master has no replica left). A probe that
 * {@code tryLock} acknowledged but the promoted master lacks is acknowledged-then-lost. After a
 * kill, {@code restore()} restarts the killed node; if the Sentinels failed over once more
 * meanwhile (a just-promoted master that misses the 1 s down-after on a loaded machine), Relock
 * connections left on the demoted node are closed, as Sentinel's own demotion would. After the
 * topology is healthy again, the clients lock for {@code --seconds-between} seconds before the
 * next failover, which also waits until every Sentinel has seen every replica report the replica
 * role (a node that {@code restore()} demoted looks like a master to a Sentinel until its next
 * INFO poll, up to 10 s later, and a Sentinel that promotes it meanwhile converts it back,
 * aborting the failover).
 *
 * <p>It prints Markdown tables (per mode, failures by type, per failover) and writes them to
 * {@code <out>/failover-<yyyy-MM-dd-HHmm>.md}. Exit code 0 when what Relock guarantees held
 * (every client and lock got critical sections after every failover; no worker hung; every
 * failure a {@link RelockException} or, from {@code unlock}, an {@link IllegalMonitorStateException};
 * with {@code replicaSync(2)} no acknowledged probe lost), 1 otherwise, 2 for bad flags.
 * Two-holder incidents are the measurement, not a failure.
 */
/**
 * The failover measurement, for longer runs than {@code FailoverMeasurementTest}: how many
 * two-holder incidents and lost holds failovers cause, without replica sync and with
 * {@code replicaSync(1, 500ms)} and {@code replicaSync(2, 500ms)}.
 *
 * <pre>
 * mvn -q -B -Pfailover -DskipTests verify -Dfailover.args="--failovers 10"
 * </pre>
 *
 * <p>It starts a Sentinel topology (one master, two replicas, three Sentinels; {@code
 * down-after} 1 s). Per mode, four clients of two threads each loop {@code tryLock} (2 s wait;
 * one thread per client on the watchdog, one with a 2 s lease) → a 1 ms busy critical section →
 * {@code unlock} over four lock names. Each critical section counts itself in and out of an
 * in-JVM counter per name; entering an occupied one is a two-holder incident. The failovers
 * alternate:
 *
 * <ul>
 *   <li><b>kill</b>: SIGKILL of the master; the Sentinels promote a replica; the killed node is
 *       restarted (empty) and made a replica of the new master;
 *   <li><b>Sentinel failover</b> ({@code SENTINEL FAILOVER}): the old master keeps running, still
 *       a master, and Relock's clients stay connected to it. Half of them have their connections
 *       to it closed (as a network blip or a restart would) and reconnect through Sentinel to the
 *       new master; the rest keep locking on the old one until Sentinel demotes it by itself
 *       (about ten seconds later, closing its client connections) — a split brain.
 * </ul>
 *
 * <p>Before each failover a probe client takes a lock with a 60 s lease and, right after, looks
 * for it on the promoted master (on the server itself); after a Sentinel failover it also takes
 * one on the deposed master, and with replica sync on closes its connection there while the
 * acquire's {@code WAIT} blocks (the deposed master has no replica left). A probe that
 * {@code tryLock} acknowledged but the promoted master lacks is acknowledged-then-lost. After a
 * kill, {@code restore()} restarts the killed node; if the Sentinels failed over once more
 * meanwhile (a just-promoted master that misses the 1 s down-after on a loaded machine), Relock
 * connections left on the demoted node are closed, as Sentinel's own demotion would. After the
 * topology is healthy again, the clients lock for {@code --seconds-between} seconds before the
 * next failover, which also waits until every Sentinel has seen every replica report the replica
 * role (a node that {@code restore()} demoted looks like a master to a Sentinel until its next
 * INFO poll, up to 10 s later, and a Sentinel that promotes it meanwhile converts it back,
 * aborting the failover).
 *
 * <p>It prints Markdown tables (per mode, failures by type, per failover) and writes them to
 * {@code <out>/failover-<yyyy-MM-dd-HHmm>.md}. Exit code 0 when what Relock guarantees held
 * (every client and lock got critical sections after every failover; no worker hung; every
 * failure a {@link RelockException} or, from {@code unlock}, an {@link IllegalMonitorStateException};
 * with {@code replicaSync(2)} no acknowledged probe lost), 1 otherwise, 2 for bad flags.
 * Two-holder incidents are the measurement, not a failure.
 */
public final class FailoverRun {

    /** How long the clients get, before the first failover and after each, to show progress. */
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(30);

    private FailoverRun() {
    }

    public static void main(String[] args) {
        FailoverOptions options;
        try {
            options = FailoverOptions.parse(args);
        } catch (IllegalArgumentException e) {
            if (e.getMessage().equals("help")) {
                System.out.println(FailoverOptions.USAGE);
                System.exit(0);
            }
            System.err.println(e.getMessage());
            System.err.println(FailoverOptions.USAGE);
            System.exit(2);
            return;
        }
        try {
            System.exit(run(options, String.join(" ", args).trim()) ? 0 : 1);
        } catch (IOException | RuntimeException | InterruptedException e) {
            System.err.println("the failover run failed: " + Diagnostics.stackTrace(e));
            System.exit(1);
        }
    }

    /** Runs every mode on one topology, prints and writes the report; true if every guarantee held. */
    static boolean run(FailoverOptions options, String flags) throws IOException, InterruptedException {
        long started = System.nanoTime();
        ZonedDateTime start = ZonedDateTime.now(ZoneOffset.UTC);
        String command = flags.isEmpty() ? FailoverOptions.COMMAND : FailoverOptions.COMMAND + " -Dfailover.args=\"" + flags + "\"";
        List<Measurement> results = new ArrayList<>();
        Environment environment;
        try (SentinelTopology topology = SentinelTopology.start()) {
            environment = Environment.describe(start, command, topology.master());
            System.out.println("failover run: " + topology + "; " + options.failovers() + " failovers per mode, "
                    + options.between().toSeconds() + " s between");
            for (Mode mode : options.modes()) {
                topology.restore();
                topology.flushAll();
                try (Measurement measurement = new Measurement(topology, mode, options)) {
                    measurement.execute();
                    results.add(measurement);
                    System.out.println(measurement.summary());
                }
            }
        }
        String report = FailoverReport.render(environment, options, results, Duration.ofNanos(System.nanoTime() - started));
        Files.createDirectories(options.out());
        Path file = options.out().resolve("failover-"
                + start.format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm", Locale.ROOT)) + ".md");
        Files.writeString(file, report, StandardCharsets.UTF_8);
        System.out.println();
        System.out.print(report);
        System.out.println();
        System.out.println("file: " + file.toAbsolutePath().normalize());
        return results.stream().allMatch(m -> m.violations().isEmpty());
    }

    /** One failover's record. */
    record Round(int number, Fault fault, long switchMillis, long healthyMillis, String settled, long faultSections,
            long faultIncidents,
            long splitSections, long splitIncidents, String held, String deposed, boolean followed, String progress) {
    }

    /** One mode's run: its clients, workers, probes and tallies. */
    static final class Measurement implements AutoCloseable {

        final Mode mode;
        final FailoverWorkload workload;
        private final SentinelTopology topology;
        private final FailoverOptions options;
        private final FailoverFaults faults;

        final List<Round> rounds = new ArrayList<>();
        final List<String> probesLost = new ArrayList<>();
        int probesAcknowledged;
        int extraFailovers;
        String startProgress;
        String aborted;

        Measurement(SentinelTopology topology, Mode mode, FailoverOptions options) {
            this.topology = topology;
            this.mode = mode;
            this.options = options;
            String prefix = "fo:" + mode.flag + ":";
            this.workload = new FailoverWorkload(topology, mode, prefix);
            try {
                this.faults = new FailoverFaults(topology, mode, workload, prefix);
            } catch (RuntimeException e) {
                workload.close();
                throw e;
            }
        }

        void execute() throws InterruptedException {
            workload.start();
            try {
                Phase first = workload.phase();
                TimeUnit.MILLISECONDS.sleep(options.between().toMillis()); // load, not synchronisation
                if (!first.awaitProgress(System.nanoTime() + PROGRESS_TIMEOUT.toNanos())) {
                    startProgress = first.progress();
                    return;
                }
                for (int number = 1; number <= options.failovers(); number++) {
                    Fault fault = number % 2 == 1 ? Fault.KILL : Fault.SENTINEL_FAILOVER;
                    Round round = failOver(number, fault);
                    rounds.add(round);
                    System.out.printf(Locale.ROOT, "[%s] %s %d: new master after %d ms, healthy after %d ms%s, %s%n",
                            mode.label, fault.label, number, round.switchMillis(), round.healthyMillis(),
                            round.settled(),
                            round.followed() ? "clients followed" : "clients did NOT follow: " + round.progress());
                    if (!round.followed()) {
                        return;
                    }
                }
            } catch (IllegalStateException | UncheckedIOException e) {
                // The topology did not do what it should (the message has the servers' log tails).
                aborted = e.toString();
                System.out.println("[" + mode.label + "] aborted: " + aborted);
            } finally {
                workload.stop();
            }
        }

        private Round failOver(int number, Fault fault) throws InterruptedException {
            faults.awaitSentinelsSeeReplicas();
            RedisServer previous = topology.master();
            Probe held = faults.probe("held:" + number);
            held.start();
            held.finish();
            Phase during = new Phase();
            workload.enter(during);
            long start = System.nanoTime();
            RedisServer promoted;
            if (fault == Fault.KILL) {
                previous.kill();
                promoted = topology.awaitMasterChange(previous, TOPOLOGY_TIMEOUT);
            } else {
                promoted = topology.failover(TOPOLOGY_TIMEOUT);
            }
            long switched = System.nanoTime();
            check(held, promoted);
            Probe deposed = null;
            Phase split = null;
            String settled;
            if (fault == Fault.KILL) {
                topology.restore();
                settled = settle(promoted);
            } else {
                deposed = faults.takeOnDeposedMaster(number, previous);
                check(deposed, promoted);
                split = new Phase();
                workload.enter(split);
                faults.disconnect(previous, DETACHED_FIRST, false);
                // Sentinel demotes the old master by itself and closes its clients' connections.
                topology.awaitHealthy(TOPOLOGY_TIMEOUT);
                settled = topology.master() != promoted ? ", the Sentinels failed over again" : "";
                extraFailovers += settled.isEmpty() ? 0 : 1;
            }
            long healthy = System.nanoTime();
            Phase after = new Phase();
            workload.enter(after);
            TimeUnit.MILLISECONDS.sleep(options.between().toMillis()); // load, not synchronisation
            boolean followed = after.awaitProgress(System.nanoTime() + PROGRESS_TIMEOUT.toNanos());
            String progress = followed ? after.progress() : after.progress() + "; connections: " + faults.connections();
            held.release();
            if (deposed != null) {
                deposed.release();
            }
            return new Round(number, fault, millis(switched - start), millis(healthy - start), settled,
                    during.acquisitions.sum(), during.incidents.sum(), split == null ? -1 : split.acquisitions.sum(),
                    split == null ? -1 : split.incidents.sum(), held.outcome, deposed == null ? null : deposed.outcome,
                    followed, progress);
        }

        private void check(Probe probe, RedisServer promoted) {
            if (!probe.acquired) {
                return;
            }
            probesAcknowledged++;
            if (probe.on(promoted)) {
                probe.outcome += ", on the promoted master";
            } else {
                probe.outcome += ", LOST: not on the promoted master";
                probesLost.add(probe.name);
            }
        }

        /**
         * After {@link SentinelTopology#restore()}. Under load Sentinel may have failed over once
         * more meanwhile (a just-promoted master that misses its 1 s {@code down-after} is
         * declared down), deposing a running master; {@code restore()} demotes it with
         * {@code REPLICAOF} but, unlike Sentinel's own demotion, does not close its clients'
         * connections, and Relock's clients would stay on a replica. So Relock connections on
         * replicas are closed here, as Sentinel would have.
         */
        private String settle(RedisServer promoted) {
            RedisServer master = topology.master();
            int closed = 0;
            for (RedisServer node : topology.dataNodes()) {
                if (node != master) {
                    closed += faults.disconnect(node, client -> true, true);
                }
            }
            String note = "";
            if (master != promoted) {
                extraFailovers++;
                note += ", the Sentinels failed over again";
            }
            return note + (closed > 0 ? ", closed " + closed + " Relock connections left on replicas" : "");
        }

        long splitIncidents() {
            return rounds.stream().mapToLong(r -> Math.max(0, r.splitIncidents())).sum();
        }

        String medianSwitch(Fault fault) {
            long[] times = rounds.stream().filter(r -> r.fault() == fault).mapToLong(Round::switchMillis).sorted()
                    .toArray();
            return times.length == 0 ? "–" : String.format(Locale.ROOT, "%.1f s", times[times.length / 2] / 1000.0);
        }

        /** What Relock guarantees and this run saw broken. */
        List<String> violations() {
            List<String> violations = new ArrayList<>();
            if (aborted != null) {
                violations.add("aborted: " + aborted);
            }
            if (startProgress != null) {
                violations.add("no progress before the first failover: " + startProgress);
            }
            rounds.stream().filter(r -> !r.followed())
                    .forEach(r -> violations.add("clients did not follow failover " + r.number() + ": "
                            + r.progress()));
            if (!workload.hungWorkers.isEmpty()) {
                violations.add("workers hung: " + workload.hungWorkers);
            }
            if (!workload.unexpected.isEmpty()) {
                violations.add("failures outside the contract: " + workload.unexpected);
            }
            if (mode.replicas >= 2 && !probesLost.isEmpty()) {
                violations.add("probe holds acknowledged by every replica but lost: " + probesLost);
            }
            return violations;
        }

        String summary() {
            return String.format(Locale.ROOT, "[%s] %d failovers (+%d by Sentinel on its own), %d critical sections,"
                    + " %d two-holder incidents (%d in splits), acknowledged-then-lost probes %d of %d, lost-lease"
                    + " events %d, failures %d, guarantees %s", mode.label, rounds.size(), extraFailovers,
                    workload.acquisitions.sum(), workload.incidents.sum(), splitIncidents(), probesLost.size(),
                    probesAcknowledged, workload.lostEvents(), workload.errorTotal(),
                    violations().isEmpty() ? "held" : "BROKEN: " + violations());
        }

        private static long millis(long nanos) {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }

        @Override
        public void close() {
            workload.close();
            faults.close();
        }
    }
}
