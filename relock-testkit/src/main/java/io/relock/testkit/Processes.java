package io.relock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Signals and bounded waits for operating-system processes (POSIX only).
 *
 * <p>Java has no API for SIGSTOP and SIGCONT, so signals are sent with the shell's built-in
 * {@code kill}, which exists wherever {@code sh} does (unlike {@code /bin/kill}).
 */
final class Processes {

    /** How long a helper command such as {@code kill} may take before it counts as hung. */
    static final Duration HELPER_TIMEOUT = Duration.ofSeconds(10);

    private static final Set<String> SIGNALS = Set.of("STOP", "CONT", "KILL", "TERM");
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * The CPU time {@code process} and its descendants have used so far (what the operating
     * system reports of each live one): a server's cost, beside its clients'.
     */
    static Duration cpuTime(ProcessHandle process) {
        return Stream.concat(Stream.of(process), process.descendants())
                .map(handle -> handle.info().totalCpuDuration().orElse(Duration.ZERO))
                .reduce(Duration.ZERO, Duration::plus);
    }

    /** {@link #state(long)} of a process that does not exist. */
    static final char GONE = '-';

    /** {@link #state(long)} where there is no {@code /proc} to ask. */
    static final char NO_PROC = '*';

    private Processes() {
    }

    /**
     * Sends {@code signal} to {@code pid}.
     *
     * @param signal one of {@code STOP}, {@code CONT}, {@code KILL}, {@code TERM}
     * @throws IllegalArgumentException if {@code signal} is not one of those
     * @throws IllegalStateException if {@code kill} fails (for example: no such process) or hangs
     * @throws UncheckedIOException if {@code sh} cannot be started
     */
    static void signal(long pid, String signal) {
        Objects.requireNonNull(signal, "signal must not be null");
        if (!SIGNALS.contains(signal)) {
            throw new IllegalArgumentException("signal must be one of " + SIGNALS + ": " + signal);
        }
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", "kill -s " + signal + " \"$1\"", "sh", Long.toString(pid))
                .redirectErrorStream(true);
        Process kill;
        try {
            kill = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run sh to send SIG" + signal + " to " + pid, e);
        }
        try (InputStream out = kill.getInputStream()) {
            kill.getOutputStream().close();
            // kill prints at most one short line, so reading to EOF before waiting cannot block for long.
            String output = new String(out.readAllBytes(), StandardCharsets.UTF_8).trim();
            // Process.waitFor, not the handle's onExit: the handle can report the exit before
            // the Process has recorded the exit value, and exitValue() would then throw.
            if (!waitFor(kill)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -s " + signal + " " + pid + " did not finish within " + HELPER_TIMEOUT);
            }
            if (kill.exitValue() != 0) {
                throw new IllegalStateException("kill -s " + signal + " " + pid + " failed (exit code "
                        + kill.exitValue() + "): " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the output of kill -s " + signal + " " + pid, e);
        }
    }

    private static boolean waitFor(Process process) {
        boolean interrupted = false;
        try {
            long deadline = System.nanoTime() + HELPER_TIMEOUT.toNanos();
            while (true) {
                try {
                    return process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // a signal must be delivered (or fail) before returning
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits until a process this JVM started has exited, at most {@code timeout}; afterwards its
     * {@code exitValue()} is available. On interrupt the flag is restored and it returns at once.
     *
     * @return whether the process has exited
     */
    static boolean awaitExit(Process process, Duration timeout) {
        Objects.requireNonNull(process, "process must not be null");
        try {
            return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /**
     * Waits until {@code process} has exited, at most {@code timeout}.
     *
     * <p>If the calling thread is interrupted, the interrupt flag is restored and the method
     * returns at once.
     *
     * @return whether the process has exited
     */
    static boolean awaitExit(ProcessHandle process, Duration timeout) {
        Objects.requireNonNull(process, "process must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        try {
            process.onExit().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return !process.isAlive();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for process " + process.pid() + " failed", e.getCause());
        }
    }

    /**
     * Kills {@code process} with SIGKILL and waits until it has exited, at most {@code timeout}.
     * Does nothing if it is not alive.
     *
     * @throws IllegalStateException if it is still alive after {@code timeout}
     */
    static void killAndAwait(ProcessHandle process, Duration timeout) {
        if (!process.isAlive()) {
            return;
        }
        process.destroyForcibly();
        if (!awaitExit(process, timeout)) {
            throw new IllegalStateException("process " + process.pid() + " is still alive " + timeout + " after SIGKILL");
        }
    }

    /**
     * Waits until the kernel reports {@code pid} as stopped (after SIGSTOP), at most
     * {@code timeout}, so that a caller of {@code pause()} can rely on the process not running
     * any more. A no-op where {@code /proc} does not exist: there {@code kill} returning is all
     * we know.
     *
     * @throws IllegalStateException if the process is not stopped within {@code timeout}, exits,
     *     or the calling thread is interrupted (its interrupt flag stays set)
     */
    static void awaitStopped(long pid, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            char state = state(pid);
            if (state == NO_PROC || state == 'T' || state == 't') {
                return;
            }
            if (state == GONE || state == 'Z') {
                throw new IllegalStateException("process " + pid + " exited instead of stopping");
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("process " + pid + " is not stopped " + timeout
                        + " after SIGSTOP (state " + state + ")");
            }
            if (Thread.currentThread().isInterrupted()) {
                // parkNanos would return at once for the rest of the timeout; the flag stays set.
                throw new IllegalStateException("interrupted while waiting for process " + pid + " to stop");
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /**
     * Returns the kernel's state letter for {@code pid} from {@code /proc/<pid>/stat} (e.g.
     * {@code R}, {@code S}, {@code T} stopped, {@code Z} zombie: dead but not yet reaped by its
     * parent), {@link #GONE} if there is no such process, or {@link #NO_PROC} where
     * {@code /proc} does not exist.
     *
     * @throws UncheckedIOException if the file exists but cannot be read
     */
    static char state(long pid) {
        if (!Files.isDirectory(Path.of("/proc", "self"))) {
            return NO_PROC;
        }
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String line = Files.readString(stat, StandardCharsets.UTF_8);
            // Format: "pid (comm) S ...": comm may contain spaces and ')', so find the last ')'.
            int close = line.lastIndexOf(')');
            return close >= 0 && close + 2 < line.length() ? line.charAt(close + 2) : '?';
        } catch (NoSuchFileException e) {
            return GONE;
        } catch (IOException e) {
            if (!Files.exists(stat)) {
                return GONE; // it vanished while we read
            }
            throw new UncheckedIOException("cannot read " + stat, e);
        }
    }
}
