package io.relock.bench;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
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
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;

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

    static final String COMMAND = "mvn -q -B -Pfailover -DskipTests verify";

    static final String USAGE = String.join("\n",
            "usage: FailoverRun [flags]   (" + COMMAND + " -Dfailover.args=\"flags\")",
            "  --failovers 20          failovers per mode, alternating kill and Sentinel failover",
            "  --seconds-between 5     seconds of locking on a healthy topology before each failover",
            "  --modes off,sync1,sync2 replica sync off, replicaSync(1, 500ms), replicaSync(2, 500ms)",
            "  --out results           where failover-<yyyy-MM-dd-HHmm>.md goes");

    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 2;
    private static final int LOCKS = 4;
    /** Clients whose connections to a deposed master are closed first; they lock on the new master meanwhile. */
    private static final IntPredicate DETACHED_FIRST = client -> client >= CLIENTS / 2;
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration REPLICA_SYNC_TIMEOUT = Duration.ofMillis(500);
    private static final long WAIT_MILLIS = 2000;
    private static final long LEASE_MILLIS = 2000;
    private static final long PROBE_LEASE_MILLIS = 60_000;
    /** The probe client's owner id (it uses the async API, so no thread owns its holds). */
    private static final long PROBE_OWNER = 1;
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long CRITICAL_SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Critical sections each client must complete after a failover for it to count as followed. */
    private static final int PROGRESS = 3;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration TOPOLOGY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
    private static final int MESSAGE_LENGTH = 200;

    private FailoverRun() {
    }

    public static void main(String[] args) {
        Flags options;
        try {
            options = Flags.parse(args);
        } catch (IllegalArgumentException e) {
            if (e.getMessage().equals("help")) {
                System.out.println(USAGE);
                System.exit(0);
            }
            System.err.println(e.getMessage());
            System.err.println(USAGE);
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

    /** The flags; each may be given once. */
    record Flags(int failovers, Duration between, Set<Mode> modes, Path out) {

        static Flags parse(String... args) {
            List<String> words = new ArrayList<>();
            for (String arg : args) {
                for (String word : arg.trim().split("\\s+")) {
                    if (!word.isEmpty()) {
                        words.add(word);
                    }
                }
            }
            Integer failovers = null;
            Duration between = null;
            Set<Mode> modes = null;
            Path out = null;
            Set<String> seen = new LinkedHashSet<>();
            for (int i = 0; i < words.size(); i++) {
                String flag = words.get(i);
                if (flag.equals("--help") || flag.equals("-h")) {
                    throw new IllegalArgumentException("help");
                }
                if (!seen.add(flag)) {
                    throw new IllegalArgumentException(flag + " was given twice");
                }
                if (i + 1 >= words.size()) {
                    throw new IllegalArgumentException(flag + " needs a value");
                }
                String value = words.get(++i);
                switch (flag) {
                    case "--failovers" -> failovers = positive(flag, value);
                    case "--seconds-between" -> between = Duration.ofSeconds(positive(flag, value));
                    case "--modes" -> modes = modes(value);
                    case "--out" -> out = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown flag " + flag);
                }
            }
            return new Flags(failovers != null ? failovers : 20, between != null ? between : Duration.ofSeconds(5),
                    modes != null ? modes : new LinkedHashSet<>(List.of(Mode.values())),
                    out != null ? out : Path.of("results"));
        }

        private static int positive(String flag, String value) {
            int number;
            try {
                number = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + " must be a whole number: " + value, e);
            }
            if (number < 1) {
                throw new IllegalArgumentException(flag + " must be at least 1: " + value);
            }
            return number;
        }

        private static Set<Mode> modes(String value) {
            Set<Mode> modes = new LinkedHashSet<>();
            for (String name : value.split(",")) {
                modes.add(Arrays.stream(Mode.values()).filter(m -> m.flag.equals(name)).findFirst()
                        .orElseThrow(() -> new IllegalArgumentException("--modes takes off, sync1 and sync2: "
                                + value)));
            }
            return modes;
        }
    }

    enum Mode {
        OFF("off", "replicaSync off", 0),
        SYNC1("sync1", "replicaSync(1, 500ms)", 1),
        SYNC2("sync2", "replicaSync(2, 500ms)", 2);

        final String flag;
        final String label;
        final int replicas;

        Mode(String flag, String label, int replicas) {
            this.flag = flag;
            this.label = label;
            this.replicas = replicas;
        }
    }

    enum Fault {
        KILL("kill"), SENTINEL_FAILOVER("Sentinel failover");

        final String label;

        Fault(String label) {
            this.label = label;
        }
    }

    /** Runs every mode on one topology, prints and writes the report; true if every guarantee held. */
    static boolean run(Flags options, String flags) throws IOException, InterruptedException {
        long started = System.nanoTime();
        ZonedDateTime start = ZonedDateTime.now(ZoneOffset.UTC);
        String command = flags.isEmpty() ? COMMAND : COMMAND + " -Dfailover.args=\"" + flags + "\"";
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
        String report = report(environment, options, results, Duration.ofNanos(System.nanoTime() - started));
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

    private static String report(Environment environment, Flags options, List<Measurement> results, Duration elapsed) {
        Map<String, Object> versions = environment.versions();
        StringBuilder md = new StringBuilder("# Relock under failover\n\n");
        md.append(String.format(Locale.ROOT, "Run %s with `%s` (%.1f min) on %s; JDK %s, Redis %s, Relock %s (git %s,"
                + " on Lettuce %s).%n%n", environment.dateText(), environment.command(), elapsed.toMillis() / 60_000.0,
                environment.machineText(), versions.get("jdk"), versions.get("redis"), versions.get("relock"),
                versions.get("relock_git"), versions.get("lettuce")));
        md.append(String.format(Locale.ROOT, "Sentinel topology: 1 master, 2 replicas, 3 Sentinels (down-after 1 s,"
                + " failover-timeout 5 s). Per mode: %d clients × %d threads, %d lock names, `tryLock` with a %d ms"
                + " wait (one thread per client on the %d s watchdog, one with a %d ms lease), a %d ms busy critical"
                + " section, command timeout %d s; %d failovers alternating kill and Sentinel failover, %d s of locking"
                + " on a healthy topology before each.%n%n", CLIENTS, THREADS_PER_CLIENT, LOCKS, WAIT_MILLIS,
                WATCHDOG_TIMEOUT.toSeconds(), LEASE_MILLIS, TimeUnit.NANOSECONDS.toMillis(CRITICAL_SECTION_NANOS),
                COMMAND_TIMEOUT.toSeconds(), options.failovers(), options.between().toSeconds()));

        md.append(row("mode", "failovers (+ Sentinel's own)", "critical sections", "two-holder incidents",
                "… of them in splits", "acknowledged-then-lost probes", "lost-lease events (gone / renewal failed)",
                "unlock found the hold gone (surely before its lease ran out)", "waits ran out", "failures",
                "median time to a new master (kill / Sentinel)", "longest call", "guarantees"));
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Measurement m : results) {
            md.append(row(m.mode.label, m.rounds.size() + " (+" + m.extraFailovers + ")", m.acquisitions.sum(),
                    m.incidents.sum(), m.splitIncidents(), m.probesLost.size() + " of " + m.probesAcknowledged,
                    m.lostEvents() + " (" + m.lostGone.sum() + " / " + m.lostRenewal.sum() + ")",
                    m.unlockGone() + " (" + m.unlockGoneWithinLease.sum() + ")",
                    m.waitsRanOut.sum(), m.errorTotal(),
                    m.medianSwitch(Fault.KILL) + " / " + m.medianSwitch(Fault.SENTINEL_FAILOVER),
                    TimeUnit.NANOSECONDS.toMillis(m.longestCallNanos.get()) + " ms",
                    m.violations().isEmpty() ? "held" : "**" + cell(String.join("; ", m.violations())) + "**"));
        }
        md.append("\nTwo-holder incident: a critical section entered while another was inside it (checked in the JVM,"
                + " not by the lock). Acknowledged-then-lost: a probe hold that `tryLock` returned true for but that"
                + " the promoted master did not have (one probe is held across each failover; after a Sentinel failover"
                + " another is taken on the deposed master, and with replica sync its connection is closed while its"
                + " WAIT blocks there). A lost-lease event is a `LockListener` call: \"gone\" when the watchdog found"
                + " the hold missing, \"renewal failed\" when it could not renew in time. Sentinel's own failovers: a"
                + " just-promoted master that misses the 1 s down-after is failed over again; Relock connections left"
                + " on a node that was demoted without closing them are closed, as Sentinel's demotion does.\n");

        md.append("\n## Failures by type\n\n").append(row("mode", "call and exception", "count", "first message"));
        md.append("|---|---|---:|---|\n");
        for (Measurement m : results) {
            new TreeMap<>(m.errors).forEach((key, count) ->
                    md.append(row(m.mode.label, key, count.sum(), cell(m.firstMessages.get(key)))));
        }

        md.append("\n## Failovers\n\n").append(row("mode", "#", "fault", "new master after", "healthy after", "notes",
                "critical sections during the failover / split", "incidents during the failover / split",
                "probe held across", "probe on the deposed master", "clients followed"));
        md.append("|---|---:|---|---:|---:|---|---:|---:|---|---|---|\n");
        for (Measurement m : results) {
            for (Round r : m.rounds) {
                md.append(row(m.mode.label, r.number(), r.fault().label, r.switchMillis() + " ms",
                        r.healthyMillis() + " ms",
                        r.settled().isEmpty() ? "" : cell(r.settled().substring(2)),
                        r.faultSections() + " / " + (r.splitSections() < 0 ? "–" : r.splitSections()),
                        r.faultIncidents() + " / " + (r.splitIncidents() < 0 ? "–" : r.splitIncidents()),
                        cell(r.held()), r.deposed() == null ? "–" : cell(r.deposed()),
                        r.followed() ? "yes" : "**no**: " + cell(r.progress())));
            }
        }
        return md.toString();
    }

    private static String row(Object... cells) {
        return Arrays.stream(cells).map(String::valueOf).collect(Collectors.joining(" | ", "| ", " |\n"));
    }

    private static String cell(String text) {
        if (text == null) {
            return "";
        }
        String flat = text.replace('\n', ' ').replace("|", "\\|");
        return flat.length() > MESSAGE_LENGTH ? flat.substring(0, MESSAGE_LENGTH) + "…" : flat;
    }

    /** One failover's record. */
    record Round(int number, Fault fault, long switchMillis, long healthyMillis, String settled, long faultSections,
            long faultIncidents,
            long splitSections, long splitIncidents, String held, String deposed, boolean followed, String progress) {
    }

    /**
     * A stretch of the run — before the first failover, during one, during a split, after one —
     * with its own progress latches and counts.
     */
    private static final class Phase {

        final LongAdder acquisitions = new LongAdder();
        final LongAdder incidents = new LongAdder();
        final CountDownLatch[] perClient = new CountDownLatch[CLIENTS];
        final CountDownLatch[] perLock = new CountDownLatch[LOCKS];
        final AtomicReferenceArray<String> lastFailure = new AtomicReferenceArray<>(CLIENTS);

        Phase() {
            Arrays.setAll(perClient, i -> new CountDownLatch(PROGRESS));
            Arrays.setAll(perLock, i -> new CountDownLatch(1));
        }

        void completed(int client, int lock) {
            acquisitions.increment();
            perClient[client].countDown();
            perLock[lock].countDown();
        }

        /** Waits until every client and lock made progress; false at the deadline. */
        boolean awaitProgress(long deadlineNanos) throws InterruptedException {
            for (CountDownLatch latch : perClient) {
                if (!latch.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            for (CountDownLatch latch : perLock) {
                if (!latch.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            return true;
        }

        String progress() {
            StringBuilder text = new StringBuilder("critical sections " + acquisitions.sum()
                    + ", per client still missing "
                    + Arrays.stream(perClient).map(l -> Long.toString(l.getCount())).collect(Collectors.joining("/"))
                    + ", locks never taken " + Arrays.stream(perLock).filter(l -> l.getCount() > 0).count());
            for (int client = 0; client < CLIENTS; client++) {
                if (perClient[client].getCount() > 0) {
                    text.append("; client ").append(client).append(" last failed with ")
                            .append(lastFailure.get(client));
                }
            }
            return text.toString();
        }
    }

    /** One probe hold: taken by the probe client, then looked for on the promoted master. */
    private static final class Probe {

        final String name;
        final DistributedLock lock;
        final String field;
        CompletableFuture<Boolean> reply;
        String outcome;
        boolean acquired;

        Probe(Relock client, String name) {
            this.name = name;
            this.lock = client.getLock(name);
            this.field = client.clientId() + ":" + PROBE_OWNER;
        }

        void start() {
            reply = lock.tryLockAsync(0, PROBE_LEASE_MILLIS, TimeUnit.MILLISECONDS, PROBE_OWNER).toCompletableFuture();
        }

        void finish() throws InterruptedException {
            try {
                acquired = reply.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                outcome = acquired ? "acknowledged" : "not acquired";
            } catch (ExecutionException e) {
                outcome = "refused (" + e.getCause().getClass().getSimpleName() + ")";
            } catch (TimeoutException e) {
                outcome = "no answer within " + PROBE_TIMEOUT.toSeconds() + " s";
            }
        }

        boolean on(RedisServer server) {
            return Long.valueOf(1).equals(server.command("HEXISTS", name, field));
        }

        void release() throws InterruptedException {
            if (!acquired) {
                return;
            }
            try {
                lock.unlockAsync(PROBE_OWNER).toCompletableFuture()
                        .get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                outcome += ", unlock: " + e.getCause().getClass().getSimpleName();
            } catch (TimeoutException e) {
                outcome += ", unlock: no answer within " + PROBE_TIMEOUT.toSeconds() + " s";
            }
        }
    }

    /** One mode's run: its clients, workers, probes and tallies. */
    static final class Measurement implements AutoCloseable {

        final Mode mode;
        private final SentinelTopology topology;
        private final Flags options;
        private final String prefix;
        private final List<Relock> clients = new ArrayList<>();
        private final Relock probeClient;
        private final List<Thread> workers = new ArrayList<>();
        private final AtomicInteger[] occupancy = new AtomicInteger[LOCKS];
        private volatile boolean stopped;
        private volatile Phase phase = new Phase();

        final LongAdder acquisitions = new LongAdder();
        final LongAdder incidents = new LongAdder();
        final LongAdder waitsRanOut = new LongAdder();
        final LongAdder lostGone = new LongAdder();
        final LongAdder lostRenewal = new LongAdder();
        final LongAdder unlockGoneWithinLease = new LongAdder();
        final LongAdder unlockGoneOther = new LongAdder();
        final AtomicLong longestCallNanos = new AtomicLong();
        final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
        final Map<String, String> firstMessages = new ConcurrentHashMap<>();
        final Set<String> unexpected = ConcurrentHashMap.newKeySet();
        final List<Round> rounds = new ArrayList<>();
        final List<String> probesLost = new ArrayList<>();
        final List<String> hungWorkers = new ArrayList<>();
        int probesAcknowledged;
        int extraFailovers;
        String startProgress;
        String aborted;

        Measurement(SentinelTopology topology, Mode mode, Flags options) {
            this.topology = topology;
            this.mode = mode;
            this.options = options;
            this.prefix = "fo:" + mode.flag + ":";
            Arrays.setAll(occupancy, i -> new AtomicInteger());
            try {
                for (int i = 0; i < CLIENTS; i++) {
                    Relock client = Relock.create(config());
                    clients.add(client);
                    client.addLockListener(event -> (event.cause() == null ? lostGone : lostRenewal).increment());
                }
                probeClient = Relock.create(config());
            } catch (RuntimeException e) {
                clients.forEach(Relock::close);
                throw e;
            }
        }

        private RelockConfig config() {
            RelockConfig.Builder builder = RelockConfig.builder()
                    .sentinel(topology.masterName(), topology.sentinelUris().toArray(String[]::new))
                    .commandTimeout(COMMAND_TIMEOUT)
                    .watchdogTimeout(WATCHDOG_TIMEOUT);
            if (mode.replicas > 0) {
                builder.replicaSync(mode.replicas, REPLICA_SYNC_TIMEOUT);
            }
            return builder.build();
        }

        void execute() throws InterruptedException {
            for (int client = 0; client < CLIENTS; client++) {
                for (int thread = 0; thread < THREADS_PER_CLIENT; thread++) {
                    int c = client;
                    boolean watchdog = thread == 0;
                    String name = "failover-" + mode.flag + "-" + client + "." + thread;
                    Thread worker = new Thread(() -> work(c, watchdog), name);
                    worker.setDaemon(true);
                    workers.add(worker);
                    worker.start();
                }
            }
            try {
                Phase first = phase;
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
                stop();
            }
        }

        private Round failOver(int number, Fault fault) throws InterruptedException {
            awaitSentinelsSeeReplicas();
            RedisServer previous = topology.master();
            Probe held = new Probe(probeClient, prefix + "held:" + number);
            held.start();
            held.finish();
            Phase during = new Phase();
            phase = during;
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
                deposed = takeOnDeposedMaster(number, previous);
                check(deposed, promoted);
                split = new Phase();
                phase = split;
                disconnect(previous, DETACHED_FIRST, false);
                // Sentinel demotes the old master by itself and closes its clients' connections.
                topology.awaitHealthy(TOPOLOGY_TIMEOUT);
                settled = topology.master() != promoted ? ", the Sentinels failed over again" : "";
                extraFailovers += settled.isEmpty() ? 0 : 1;
            }
            long healthy = System.nanoTime();
            Phase after = new Phase();
            phase = after;
            TimeUnit.MILLISECONDS.sleep(options.between().toMillis()); // load, not synchronisation
            boolean followed = after.awaitProgress(System.nanoTime() + PROGRESS_TIMEOUT.toNanos());
            String progress = followed ? after.progress() : after.progress() + "; connections: " + connections();
            held.release();
            if (deposed != null) {
                deposed.release();
            }
            return new Round(number, fault, millis(switched - start), millis(healthy - start), settled,
                    during.acquisitions.sum(), during.incidents.sum(), split == null ? -1 : split.acquisitions.sum(),
                    split == null ? -1 : split.incidents.sum(), held.outcome, deposed == null ? null : deposed.outcome,
                    followed, progress);
        }

        /**
         * Waits until every Sentinel has seen every replica report the replica role.
         * {@code restore()} demotes a restarted former master itself, and a Sentinel polls
         * replicas only every 10 s: until it sees the demotion, it holds the node for a master it
         * must convert, and converts it back if a failover promotes it meanwhile — which aborts
         * that failover.
         */
        private void awaitSentinelsSeeReplicas() throws InterruptedException {
            long deadline = System.nanoTime() + TOPOLOGY_TIMEOUT.toNanos();
            for (List<String> stale = staleRoleViews(); !stale.isEmpty(); stale = staleRoleViews()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the sentinels still take replicas for masters: " + stale);
                }
                TimeUnit.MILLISECONDS.sleep(50); // Sentinel has no notification for this; polled
            }
        }

        private List<String> staleRoleViews() {
            List<String> stale = new ArrayList<>();
            for (RedisServer sentinel : topology.sentinels()) {
                for (Object replica : (List<?>) sentinel.command("SENTINEL", "REPLICAS", topology.masterName())) {
                    List<?> fields = (List<?>) replica;
                    for (int i = 0; i + 1 < fields.size(); i += 2) {
                        if ("role-reported".equals(fields.get(i)) && !"slave".equals(fields.get(i + 1))) {
                            stale.add("sentinel " + sentinel.port() + " on " + fields.get(1));
                        }
                    }
                }
            }
            return stale;
        }

        /**
         * Takes a probe hold through the probe client, which is still connected to the deposed
         * master (a master still, but with no replica left). With replica sync on, the acquire's
         * WAIT blocks there; the connection is then closed under it, as a network blip would.
         */
        private Probe takeOnDeposedMaster(int number, RedisServer deposed) throws InterruptedException {
            Probe probe = new Probe(probeClient, prefix + "deposed:" + number);
            probe.start();
            String closed = mode.replicas == 0 ? ""
                    : closeBlockedWait(deposed) ? ", connection closed during WAIT" : ", WAIT not seen blocking";
            probe.finish();
            probe.outcome += closed;
            if (probe.acquired && deposed.isRunning() && probe.on(deposed)) {
                probe.outcome += ", on the deposed master";
            }
            return probe;
        }

        /** Closes the probe client's connection to {@code server} once it blocks in WAIT; false if it never did. */
        private boolean closeBlockedWait(RedisServer server) {
            String name = "relock:" + probeClient.clientId();
            long deadline = System.nanoTime() + REPLICA_SYNC_TIMEOUT.toNanos();
            // Each CLIENT LIST is a round trip on a new connection, which paces this poll.
            while (System.nanoTime() - deadline < 0) {
                for (Map<String, String> connection : clientList(server)) {
                    if (name.equals(connection.get("name")) && "wait".equals(connection.get("cmd"))
                            && connection.getOrDefault("flags", "").contains("b")) {
                        kill(server, connection.get("id"));
                        return true;
                    }
                }
            }
            return false;
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
                    closed += disconnect(node, client -> true, true);
                }
            }
            String note = "";
            if (master != promoted) {
                extraFailovers++;
                note += ", the Sentinels failed over again";
            }
            return note + (closed > 0 ? ", closed " + closed + " Relock connections left on replicas" : "");
        }

        /** Closes the Relock connections (commands and pub/sub) of the chosen clients on {@code server}. */
        private int disconnect(RedisServer server, IntPredicate chosen, boolean probeToo) {
            Set<String> names = new LinkedHashSet<>();
            for (int i = 0; i < CLIENTS; i++) {
                if (chosen.test(i)) {
                    names.add("relock:" + clients.get(i).clientId());
                }
            }
            if (probeToo) {
                names.add("relock:" + probeClient.clientId());
            }
            int closed = 0;
            for (Map<String, String> connection : clientList(server)) {
                if (names.contains(connection.get("name"))) {
                    kill(server, connection.get("id"));
                    closed++;
                }
            }
            return closed;
        }

        /** Which node each client's connections are on, for a failure message. */
        private String connections() {
            List<String> nodes = new ArrayList<>();
            for (RedisServer node : topology.dataNodes()) {
                if (!node.isRunning()) {
                    nodes.add(node.port() + " down");
                    continue;
                }
                List<Map<String, String>> list = clientList(node);
                List<String> on = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    String name = "relock:" + clients.get(i).clientId();
                    long count = list.stream().filter(connection -> name.equals(connection.get("name"))).count();
                    if (count > 0) {
                        on.add("client " + i + " ×" + count);
                    }
                }
                nodes.add(node.port() + " " + node.info("replication").lines().filter(l -> l.startsWith("role:"))
                        .findFirst().orElse("role:?") + " " + on);
            }
            return String.join(", ", nodes);
        }

        private static List<Map<String, String>> clientList(RedisServer server) {
            List<Map<String, String>> connections = new ArrayList<>();
            for (String line : String.valueOf(server.command("CLIENT", "LIST")).split("\n")) {
                Map<String, String> fields = new TreeMap<>();
                for (String pair : line.trim().split(" ")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                    }
                }
                connections.add(fields);
            }
            return connections;
        }

        private static void kill(RedisServer server, String id) {
            try {
                server.command("CLIENT", "KILL", "ID", id);
            } catch (RedisServer.CommandException e) {
                // Gone already: the client closed it itself.
            }
        }

        private void work(int client, boolean watchdog) {
            Relock relock = clients.get(client);
            DistributedLock[] locks = new DistributedLock[LOCKS];
            Arrays.setAll(locks, i -> relock.getLock(prefix + i));
            while (!stopped) {
                int index = ThreadLocalRandom.current().nextInt(LOCKS);
                DistributedLock lock = locks[index];
                long asked = System.nanoTime();
                boolean acquired;
                try {
                    acquired = lock.tryLock(WAIT_MILLIS, watchdog ? -1 : LEASE_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (RuntimeException e) {
                    failed(client, "tryLock", e, e instanceof RelockException);
                    // An application's pause before it retries: calls fail at once while the master
                    // refuses connections, and a worker retrying at once would starve the machine.
                    LockSupport.parkNanos(RETRY_PAUSE_NANOS);
                    continue;
                } finally {
                    timed(asked);
                }
                if (!acquired) {
                    waitsRanOut.increment();
                    continue;
                }
                Phase current = phase;
                criticalSection(index, current);
                current.completed(client, index);
                acquisitions.increment();
                long unlocking = System.nanoTime();
                try {
                    lock.unlock();
                } catch (IllegalMonitorStateException e) {
                    failed(client, "unlock", e, true);
                    // From the start of tryLock to the end of unlock is longer than the hold lived on
                    // Redis: under the lease, it cannot have expired — it vanished.
                    boolean withinLease = !watchdog
                            && System.nanoTime() - asked < TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS);
                    (withinLease ? unlockGoneWithinLease : unlockGoneOther).increment();
                } catch (RuntimeException e) {
                    failed(client, "unlock", e, e instanceof RelockException);
                } finally {
                    timed(unlocking);
                }
            }
        }

        private void criticalSection(int index, Phase current) {
            if (occupancy[index].incrementAndGet() > 1) {
                incidents.increment();
                current.incidents.increment();
            }
            long end = System.nanoTime() + CRITICAL_SECTION_NANOS;
            while (System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
            occupancy[index].decrementAndGet();
        }

        private void failed(int client, String operation, RuntimeException e, boolean named) {
            String key = operation + " " + e.getClass().getSimpleName();
            errors.computeIfAbsent(key, k -> new LongAdder()).increment();
            firstMessages.putIfAbsent(key, String.valueOf(e.getMessage()));
            phase.lastFailure.set(client, key + ": " + e.getMessage());
            if (!named) {
                unexpected.add(key);
            }
        }

        private void timed(long startNanos) {
            longestCallNanos.accumulateAndGet(System.nanoTime() - startNanos, Math::max);
        }

        private void stop() throws InterruptedException {
            stopped = true;
            long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
            for (Thread worker : workers) {
                worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (worker.isAlive()) {
                    hungWorkers.add(worker.getName() + " at " + Arrays.stream(worker.getStackTrace()).limit(12)
                            .map(StackTraceElement::toString).collect(Collectors.joining(" < ")));
                }
            }
        }

        long splitIncidents() {
            return rounds.stream().mapToLong(r -> Math.max(0, r.splitIncidents())).sum();
        }

        long lostEvents() {
            return lostGone.sum() + lostRenewal.sum();
        }

        long unlockGone() {
            return unlockGoneWithinLease.sum() + unlockGoneOther.sum();
        }

        long errorTotal() {
            return errors.values().stream().mapToLong(LongAdder::sum).sum();
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
            if (!hungWorkers.isEmpty()) {
                violations.add("workers hung: " + hungWorkers);
            }
            if (!unexpected.isEmpty()) {
                violations.add("failures outside the contract: " + unexpected);
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
                    acquisitions.sum(), incidents.sum(), splitIncidents(), probesLost.size(), probesAcknowledged,
                    lostEvents(), errorTotal(),
                    violations().isEmpty() ? "held" : "BROKEN: " + violations());
        }

        private static long millis(long nanos) {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }

        @Override
        public void close() {
            stopped = true;
            clients.forEach(Relock::close);
            probeClient.close();
        }
    }
}
