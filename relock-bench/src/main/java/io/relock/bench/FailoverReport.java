package io.relock.bench;

import static io.relock.bench.FailoverWorkload.CLIENTS;
import static io.relock.bench.FailoverWorkload.COMMAND_TIMEOUT;
import static io.relock.bench.FailoverWorkload.CRITICAL_SECTION_NANOS;
import static io.relock.bench.FailoverWorkload.LEASE_MILLIS;
import static io.relock.bench.FailoverWorkload.LOCKS;
import static io.relock.bench.FailoverWorkload.THREADS_PER_CLIENT;
import static io.relock.bench.FailoverWorkload.WAIT_MILLIS;
import static io.relock.bench.FailoverWorkload.WATCHDOG_TIMEOUT;

import io.relock.bench.FailoverFaults.Fault;
import io.relock.bench.FailoverRun.Measurement;
import io.relock.bench.FailoverRun.Round;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** {@link FailoverRun}'s report: Markdown tables per mode, failures by type and per failover. */
final class FailoverReport {

    private static final int MESSAGE_LENGTH = 200;

    private FailoverReport() {
    }

    static String render(Environment environment, FailoverOptions options, List<Measurement> results, Duration elapsed) {
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
            md.append(row(m.mode.label, m.rounds.size() + " (+" + m.extraFailovers + ")", m.workload.acquisitions.sum(),
                    m.workload.incidents.sum(), m.splitIncidents(), m.probesLost.size() + " of " + m.probesAcknowledged,
                    m.workload.lostEvents() + " (" + m.workload.lostGone.sum() + " / " + m.workload.lostRenewal.sum() + ")",
                    m.workload.unlockGone() + " (" + m.workload.unlockGoneWithinLease.sum() + ")",
                    m.workload.waitsRanOut.sum(), m.workload.errorTotal(),
                    m.medianSwitch(Fault.KILL) + " / " + m.medianSwitch(Fault.SENTINEL_FAILOVER),
                    TimeUnit.NANOSECONDS.toMillis(m.workload.longestCallNanos.get()) + " ms",
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
            new TreeMap<>(m.workload.errors).forEach((key, count) ->
                    md.append(row(m.mode.label, key, count.sum(), cell(m.workload.firstMessages.get(key)))));
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
}
