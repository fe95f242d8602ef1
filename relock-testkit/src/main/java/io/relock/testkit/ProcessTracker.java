package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure that no process the testkit starts outlives the JVM that started it.
 *
 * <p>Two mechanisms, because either alone leaves a gap:
 * <ul>
 *   <li>a shutdown hook kills every tracked process that is still alive when the JVM exits
 *       normally (including {@code System.exit});</li>
 *   <li>a reaper — one small {@code sh} process per JVM, started lazily — covers a JVM that is
 *       killed with SIGKILL, where no hook runs. Each tracked process has a file named after
 *       its pid in {@code jvm-<pid>/pids/}; the file is deleted as soon as the process exits.
 *       The reaper blocks reading its stdin, a pipe whose only writer is this JVM: the kernel
 *       closes it when the JVM dies, however it dies, so the reaper wakes up at once, SIGKILLs
 *       the pids still listed, deletes this JVM's directory and exits. (Polling the JVM's pid
 *       would not notice a JVM that is dead but not yet reaped by its parent: a zombie still
 *       has a pid.) The JDK closes inherited descriptors in the processes it starts, so no
 *       other process keeps the pipe open.</li>
 * </ul>
 */
final class ProcessTracker {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessTracker.class);

    private static final Duration SHUTDOWN_KILL_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration SHUTDOWN_REAPER_TIMEOUT = Duration.ofSeconds(2);

    /**
     * The reaper, run as {@code sh -c SCRIPT sh <jvm directory>}. Pid files are named
     * {@code <pid>-<sequence>} so that a reused pid never shares a file with an exited process.
     * HUP and INT are ignored so that closing the terminal or Ctrl-C (sent to the whole process
     * group) does not kill the reaper before it has done its job.
     */
    private static final String REAPER_SCRIPT = String.join("\n",
            "trap '' HUP INT",
            "while read -r _; do :; done",
            "for f in \"$1\"/pids/*; do",
            "  p=${f##*/}; p=${p%%-*}",
            "  case $p in ''|*[!0-9]*) continue ;; esac",
            "  kill -9 \"$p\" 2>/dev/null",
            "done",
            "rm -rf \"$1\"");

    private static final Map<Process, Path> TRACKED = new ConcurrentHashMap<>();
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private static final Object LOCK = new Object();
    private static Path pidDirectory; // guarded by LOCK
    private static volatile Process reaper; // written under LOCK; read by the shutdown hook without it

    private ProcessTracker() {
    }

    /**
     * Starts a process and tracks it until it exits: the shutdown hook and the reaper will kill
     * it if the JVM exits first. The reaper is started before the process, so that the only
     * unguarded moment is between the process's start and the creation of its pid file.
     *
     * @throws IOException if the process cannot be started
     * @throws UncheckedIOException if the testkit's directories or the pid file cannot be
     *     created; a process already started is then killed, since nothing would stop it from
     *     outliving the JVM
     */
    static Process start(ProcessBuilder builder) throws IOException {
        Path pids = ensureStarted();
        Process process = builder.start();
        Path pidFile = pids.resolve(process.pid() + "-" + SEQUENCE.incrementAndGet());
        TRACKED.put(process, pidFile);
        try {
            Files.createFile(pidFile);
        } catch (IOException e) {
            process.destroyForcibly();
            TRACKED.remove(process);
            throw new UncheckedIOException("cannot write pid file " + pidFile, e);
        }
        process.onExit().thenRun(() -> untrack(process));
        return process;
    }

    private static void untrack(Process process) {
        Path pidFile = TRACKED.remove(process);
        if (pidFile != null) {
            try {
                Files.deleteIfExists(pidFile);
            } catch (IOException e) {
                // The reaper only kills pids when the JVM dies; by then this pid is long dead.
                LOG.debug("cannot delete pid file {}", pidFile, e);
            }
        }
    }

    private static Path ensureStarted() {
        synchronized (LOCK) {
            if (pidDirectory == null) {
                Path jvmDirectory = Workspace.jvmDirectory();
                Path pids = jvmDirectory.resolve("pids");
                try {
                    Workspace.createPrivateDirectories(pids);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot create " + pids, e);
                }
                reaper = startReaper(jvmDirectory);
                Runtime.getRuntime().addShutdownHook(new Thread(ProcessTracker::onShutdown, "relock-testkit-shutdown"));
                pidDirectory = pids;
            }
            return pidDirectory;
        }
    }

    private static Process startReaper(Path jvmDirectory) {
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", REAPER_SCRIPT, "sh", jvmDirectory.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        try {
            Process started = builder.start();
            LOG.debug("started reaper {} for {}", started.pid(), jvmDirectory);
            return started;
        } catch (IOException e) {
            // Still covered by the shutdown hook; only a SIGKILLed JVM would leave orphans.
            LOG.warn("cannot start the orphan reaper (sh); processes may outlive a JVM killed with SIGKILL", e);
            return null;
        }
    }

    /** Runs in the shutdown hook: kills what is still tracked, then lets the reaper exit. */
    private static void onShutdown() {
        List<Map.Entry<Process, Path>> alive = new ArrayList<>(TRACKED.entrySet());
        for (Map.Entry<Process, Path> entry : alive) {
            entry.getKey().destroyForcibly();
        }
        long deadline = System.nanoTime() + SHUTDOWN_KILL_TIMEOUT.toNanos();
        for (Map.Entry<Process, Path> entry : alive) {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            if (Processes.awaitExit(entry.getKey().toHandle(), left)) {
                // Delete it here rather than in the onExit callback, which may not have run yet,
                // so that the reaper, woken below, finds nothing to kill.
                untrack(entry.getKey());
            }
        }
        Process current = reaper;
        if (current != null) {
            try {
                current.getOutputStream().close();
            } catch (IOException ignored) {
                // the reaper still sees EOF when this JVM exits
            }
            // Waiting lets this JVM reap the reaper, so it does not linger as a zombie.
            Processes.awaitExit(current.toHandle(), SHUTDOWN_REAPER_TIMEOUT);
        }
    }
}
