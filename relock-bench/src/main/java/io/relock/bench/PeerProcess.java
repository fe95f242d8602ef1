package io.relock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A worker's handle on a {@link Peer} JVM: a participant of S3's relay whose lock lives in
 * another process, with its own client. Requests go one at a time over the peer's stdin, the
 * answers come back on its stdout; the peer's stderr goes to the worker's.
 *
 * <p>Times are {@link System#nanoTime()} values of the peer. On Linux every JVM reads the same
 * {@code CLOCK_MONOTONIC}, so they compare with the worker's own; {@link #start} checks that
 * and refuses to go on otherwise.
 */
final class PeerProcess implements S3HandOff.Participant, AutoCloseable {

    /** How long {@link #cpuNanos} waits for a request in flight (a hung relay) before giving up. */
    private static final long BUSY_TIMEOUT_SECONDS = 5;
    private static final long EXIT_TIMEOUT_SECONDS = 10;

    private final Process process;
    private final BufferedReader answers;
    private final Writer requests;
    /** One request and its answer at a time. */
    private final ReentrantLock exchange = new ReentrantLock();

    private PeerProcess(Process process) {
        this.process = process;
        this.answers = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts a peer JVM with a client of {@code library} and its lock {@code lockName}, and
     * returns once the client is connected and the clocks are checked.
     *
     * @throws IOException if the JVM cannot start or its client cannot connect
     * @throws IllegalStateException if the peer's clock is not the worker's
     */
    static PeerProcess start(Library library, String uri, String lockName, String heap) throws IOException {
        List<String> command = WorkerProcess.command(Peer.class, heap,
                List.of("--library", library.id(), "--uri", uri, "--lock", lockName));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        PeerProcess peer = new PeerProcess(process);
        try {
            peer.await(Peer.READY);
            peer.checkClock();
            return peer;
        } catch (IOException | RuntimeException e) {
            peer.close();
            throw e;
        }
    }

    /** The peer's clock read between two readings of ours, three times. */
    private void checkClock() throws IOException {
        for (int i = 0; i < 3; i++) {
            long before = System.nanoTime();
            long peer = request("CLOCK", "CLOCK");
            long after = System.nanoTime();
            if (peer < before || peer > after) {
                throw new IllegalStateException("the peer JVM's System.nanoTime() is not this JVM's clock (read "
                        + peer + " between " + before + " and " + after + "): hand-offs across JVMs cannot be timed here");
            }
        }
    }

    @Override
    public long acquire() throws IOException {
        return request("LOCK", "LOCKED");
    }

    @Override
    public long release() throws IOException {
        return request("UNLOCK", "UNLOCKED");
    }

    /**
     * The peer's CPU time so far, in nanoseconds; 0 if a request has been in flight for
     * {@value #BUSY_TIMEOUT_SECONDS} s (the run has hung, and reports that instead).
     */
    long cpuNanos() {
        try {
            if (!exchange.tryLock(BUSY_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                return 0;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
        try {
            return request("CPU", "CPU");
        } catch (IOException e) {
            throw new UncheckedIOException("the peer JVM did not report its CPU time", e);
        } finally {
            exchange.unlock();
        }
    }

    /** Sends one request and returns the number in its answer. */
    private long request(String request, String answer) throws IOException {
        exchange.lock();
        try {
            requests.write(request);
            requests.write('\n');
            requests.flush();
            return Long.parseLong(await(answer).substring(answer.length()).trim());
        } finally {
            exchange.unlock();
        }
    }

    /** Reads lines up to the one starting with {@code prefix}; other lines (a library's) are skipped. */
    private String await(String prefix) throws IOException {
        for (String line = answers.readLine(); line != null; line = answers.readLine()) {
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith(Peer.ERROR)) {
                throw new IllegalStateException("the peer JVM failed: " + line.substring(Peer.ERROR.length()).trim());
            }
        }
        throw new IOException("the peer JVM ended without answering " + prefix + exitText());
    }

    private String exitText() {
        try {
            return process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS) ? " (exit code " + process.exitValue() + ")"
                    : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Ends the peer: end of its input tells it to close its client; killed if it does not exit. */
    @Override
    public void close() {
        try {
            requests.close();
        } catch (IOException ignored) {
            // gone already
        }
        try {
            if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
