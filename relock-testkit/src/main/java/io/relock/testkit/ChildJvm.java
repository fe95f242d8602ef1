package io.relock.testkit;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Another JVM running a {@code main} class from this JVM's classpath — "another process" for
 * tests: it can hold a lock, be told to release it, be frozen with SIGSTOP, or be killed.
 *
 * <pre>{@code
 * try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "job")) {
 *     child.awaitLine("LOCKED", Duration.ofSeconds(30));
 *     child.send("release");
 *     child.awaitLine("RELEASED", Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <p>The child runs the same {@code java} binary with the same classpath. Its stdout and
 * stderr are captured by background threads (see {@link #output()}); its stdout lines can be
 * awaited with {@link #awaitLine(String, Duration)}, and lines can be sent to its stdin with
 * {@link #send(String)}. Like every process the testkit starts, it never outlives this JVM.
 *
 * <p>Thread-safe. POSIX only (Linux, macOS).
 */
public final class ChildJvm implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ChildJvm.class);

    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration STOP_SIGNAL_TIMEOUT = Duration.ofSeconds(5);
    /** Once the process has exited, its output pipes reach EOF at once; this only bounds the wait. */
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(5);

    private final Process process;
    private final String name;
    private final Writer stdin; // guarded by itself

    private final Object lock = new Object();
    private final StringBuilder output = new StringBuilder(); // guarded by lock
    private final List<Line> lines = new ArrayList<>(); // stdout lines; guarded by lock
    private int openStreams = 2; // guarded by lock
    private boolean stdoutClosed; // guarded by lock

    private ChildJvm(Process process, String name) {
        this.process = process;
        this.name = name;
        this.stdin = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
    }

    /**
     * Starts {@code mainClass} in a new JVM with this JVM's {@code java} binary and classpath.
     * Returns at once; use {@link #awaitLine(String, Duration)} to wait until the child is
     * ready.
     *
     * @param mainClass a class with a {@code public static void main(String[])}, on this JVM's classpath
     * @param args its arguments
     * @return the running child
     * @throws NullPointerException if {@code mainClass}, {@code args} or one of its elements is null
     * @throws IllegalStateException if no {@code java} binary is found
     * @throws UncheckedIOException if the process cannot be started
     */
    public static ChildJvm start(Class<?> mainClass, String... args) {
        Objects.requireNonNull(mainClass, "mainClass must not be null");
        Objects.requireNonNull(args, "args must not be null");
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.add("-cp");
        // Works also when surefire runs tests from a manifest-only jar: -cp honours its Class-Path.
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        for (int i = 0; i < args.length; i++) {
            command.add(Objects.requireNonNull(args[i], "args[" + i + "] must not be null"));
        }
        Process process;
        try {
            process = ProcessTracker.start(new ProcessBuilder(command));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a JVM for " + mainClass.getName(), e);
        }
        ChildJvm child = new ChildJvm(process, mainClass.getSimpleName());
        child.startReader(process.getInputStream(), "stdout", true);
        child.startReader(process.getErrorStream(), "stderr", false);
        LOG.debug("started child JVM {} (pid {})", mainClass.getName(), process.pid());
        return child;
    }

    /**
     * Waits until the child prints a line to stdout that starts with {@code prefix}, and returns
     * that whole line. Each line is returned at most once, so awaiting the same prefix again
     * waits for the next such line; lines printed before the call count.
     *
     * @param prefix what the line starts with
     * @param timeout how long to wait at most
     * @return the whole line, without the line terminator
     * @throws NullPointerException if {@code prefix} or {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is not positive
     * @throws IllegalStateException if no such line appears within {@code timeout} (the cause is
     *     then a {@link TimeoutException}), if the child exits (closes its stdout) first, or if
     *     the calling thread is interrupted (its interrupt flag is then set again); the message
     *     includes the output so far
     */
    public String awaitLine(String prefix, Duration timeout) {
        Objects.requireNonNull(prefix, "prefix must not be null");
        Settings.requirePositive(timeout, "timeout");
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (true) {
                for (Line line : lines) {
                    if (!line.returned && line.text.startsWith(prefix)) {
                        line.returned = true;
                        return line.text;
                    }
                }
                if (stdoutClosed) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(this + " printed no line starting with '" + prefix + "' within "
                            + timeout + "; output so far:\n" + output, new TimeoutException(timeout.toString()));
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + this + " to print a line starting with '"
                            + prefix + "'; output so far:\n" + output, e);
                }
            }
        }
        throw new IllegalStateException(this + " " + exitDescription() + " before printing a line starting with '"
                + prefix + "'; output:\n" + output());
    }

    /**
     * Writes {@code line} and a newline to the child's stdin.
     *
     * @param line the text to send, without a line terminator
     * @throws NullPointerException if {@code line} is null
     * @throws IllegalStateException if the child is no longer alive
     * @throws UncheckedIOException if writing fails, e.g. because the child closed its stdin
     */
    public void send(String line) {
        Objects.requireNonNull(line, "line must not be null");
        synchronized (stdin) {
            if (!process.isAlive()) {
                throw new IllegalStateException(this + " " + exitDescription() + "; cannot send '" + line
                        + "'; output:\n" + output());
            }
            try {
                stdin.write(line);
                stdin.write('\n');
                stdin.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot send '" + line + "' to " + this, e);
            }
        }
    }

    /** {@return the child's pid} */
    public long pid() {
        return process.pid();
    }

    /** {@return whether the child is alive (a paused child counts as alive)} */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Kills the child with SIGKILL, as in a crash, and waits until it has exited and its output
     * is read. Does nothing if it has already exited.
     *
     * @throws IllegalStateException if it is still alive 10 seconds after SIGKILL
     */
    public void kill() {
        Processes.killAndAwait(process.toHandle(), KILL_TIMEOUT);
        awaitDrained();
    }

    /**
     * Asks the child to stop with SIGTERM, as Kubernetes, systemd or {@code docker stop} do:
     * its JVM runs its shutdown hooks, then exits. Returns at once; {@link #awaitExit(Duration)}
     * waits for the exit. Does nothing if it has already exited.
     */
    public void terminate() {
        // Not Process.destroy(): it sends SIGTERM too, but closes the pipes, and the child's last
        // words (what its shutdown hooks print) would be lost.
        if (process.isAlive()) {
            Processes.signal(process.pid(), "TERM");
        }
    }

    /**
     * Pauses the child with SIGSTOP and returns once the kernel reports it stopped — like a JVM
     * in a long GC pause. Its threads (watchdogs included) do not run until {@link #resume()}.
     *
     * @throws IllegalStateException if it is not alive or does not stop within 5 seconds
     */
    public void pause() {
        requireAlive();
        Processes.signal(process.pid(), "STOP");
        Processes.awaitStopped(process.pid(), STOP_SIGNAL_TIMEOUT);
    }

    /**
     * Resumes a paused child with SIGCONT; harmless if it is not paused.
     *
     * @throws IllegalStateException if it is not alive
     */
    public void resume() {
        requireAlive();
        Processes.signal(process.pid(), "CONT");
    }

    /**
     * Waits until the child exits and its output is read, and returns its exit code (for
     * example 137 after {@link #kill()}).
     *
     * @param timeout how long to wait at most
     * @return the exit code
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is not positive
     * @throws IllegalStateException if it is still alive after {@code timeout} (the cause is then
     *     a {@link TimeoutException}; the child keeps running) or the calling thread is
     *     interrupted (its interrupt flag is then set again); the message includes the output so far
     */
    public int awaitExit(Duration timeout) {
        Settings.requirePositive(timeout, "timeout");
        if (!Processes.awaitExit(process, timeout)) {
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("interrupted while waiting for " + this + " to exit; output so far:\n"
                        + output());
            }
            throw new IllegalStateException(this + " did not exit within " + timeout + "; output so far:\n" + output(),
                    new TimeoutException(timeout.toString()));
        }
        awaitDrained();
        return process.exitValue();
    }

    /** {@return everything the child has printed so far, stdout and stderr interleaved as read} */
    public String output() {
        synchronized (lock) {
            return output.toString();
        }
    }

    /** Kills the child if it is still alive; see {@link #kill()}. */
    @Override
    public void close() {
        try {
            kill();
        } finally {
            synchronized (stdin) {
                try {
                    stdin.close();
                } catch (IOException ignored) {
                    // the child is gone; nothing reads its stdin any more
                }
            }
        }
    }

    @Override
    public String toString() {
        return "child JVM " + name + " (pid " + process.pid() + ")";
    }

    private void startReader(InputStream stream, String streamName, boolean isStdout) {
        Thread reader = new Thread(() -> read(stream, isStdout), "relock-child-" + process.pid() + "-" + streamName);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(InputStream stream, boolean isStdout) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            for (String text = reader.readLine(); text != null; text = reader.readLine()) {
                LOG.debug("[{}] {}", this, text);
                synchronized (lock) {
                    output.append(text).append('\n');
                    if (isStdout) {
                        lines.add(new Line(text));
                    }
                    lock.notifyAll();
                }
            }
        } catch (IOException e) {
            // The pipe breaks when the child is killed; what was read is kept.
            LOG.debug("reading the output of {} stopped: {}", this, e.toString());
        } finally {
            synchronized (lock) {
                openStreams--;
                if (isStdout) {
                    stdoutClosed = true;
                }
                lock.notifyAll();
            }
        }
    }

    /** Waits (bounded) until both output streams are read to the end, so that output() is complete. */
    private void awaitDrained() {
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        synchronized (lock) {
            while (openStreams > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    // A grandchild that inherited the pipes can keep them open; the output is what we have.
                    LOG.debug("output of {} still open {} after exit", this, DRAIN_TIMEOUT);
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private String exitDescription() {
        if (Processes.awaitExit(process, DRAIN_TIMEOUT)) {
            return "exited with code " + process.exitValue();
        }
        return "closed its stdout";
    }

    private void requireAlive() {
        if (!process.isAlive()) {
            throw new IllegalStateException(this + " is not alive");
        }
    }

    private static String javaBinary() {
        Path fromHome = Path.of(System.getProperty("java.home"), "bin", "java");
        if (Files.isExecutable(fromHome)) {
            return fromHome.toString();
        }
        return ProcessHandle.current().info().command()
                .orElseThrow(() -> new IllegalStateException("cannot find the java binary: " + fromHome
                        + " is not executable and the JVM does not report its command"));
    }

    /** A stdout line and whether {@link #awaitLine} has returned it. */
    private static final class Line {

        final String text;
        boolean returned; // guarded by the ChildJvm's lock

        Line(String text) {
            this.text = text;
        }
    }
}
