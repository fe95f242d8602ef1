package io.relock.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Counts what clients send to Redis with {@code MONITOR}, which tells the commands a client
 * sent (its round trips) apart from the commands that scripts ran inside Redis ({@code [0 lua]}).
 * INFO commandstats cannot: it counts a {@code DEL} the same whether a client or a script ran it.
 * MONITOR slows Redis down, so it only runs in counting phases, never in a timed window.
 *
 * <p>Lines from the bench's own {@link RedisAdmin} connection are ignored. {@link #stop} sends a
 * marker through that connection and reads up to it, so every command the server processed
 * before the marker is counted.
 */
final class Monitor implements AutoCloseable {

    private static final int TIMEOUT_MILLIS = 10_000;

    private final Socket socket;
    private final InputStream in;
    private final RedisAdmin admin;
    private final String ignoredClient;
    private final String marker = "relock-bench-marker-" + UUID.randomUUID();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread reader;

    // Written by the reader thread only; read after `finished`.
    private final Map<String, Long> clientCommands = new HashMap<>();
    private final Map<String, Long> scriptCommands = new HashMap<>();
    private final List<Double> clientTimes = new ArrayList<>();
    private volatile Throwable failure;

    private Monitor(RedisAdmin admin) {
        this.admin = admin;
        this.ignoredClient = ":" + admin.localPort() + "]";
        URI parsed = URI.create(admin.uri());
        try {
            socket = new Socket();
            socket.connect(new InetSocketAddress(parsed.getHost(), parsed.getPort()), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            RedisAdmin.write(socket.getOutputStream(), "MONITOR");
            socket.getOutputStream().flush();
            Object ok = RedisAdmin.read(in);
            if (!"OK".equals(ok)) {
                throw new IllegalStateException("MONITOR answered " + ok);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot MONITOR " + admin.uri(), e);
        }
        reader = new Thread(this::readUntilMarker, "bench-monitor");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts monitoring the server that {@code admin} is connected to. */
    static Monitor start(RedisAdmin admin) {
        return new Monitor(admin);
    }

    /**
     * Marks the end, reads every line up to the mark and returns the counts.
     *
     * @throws IllegalStateException if the marker does not arrive within 30 seconds
     */
    Counts stop() {
        admin.call("ECHO", marker);
        try {
            if (!finished.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("MONITOR did not deliver the end marker within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading MONITOR", e);
        } finally {
            close();
        }
        if (failure != null) {
            throw new IllegalStateException("reading MONITOR failed", failure);
        }
        return new Counts(Map.copyOf(clientCommands), Map.copyOf(scriptCommands), List.copyOf(clientTimes));
    }

    private void readUntilMarker() {
        try {
            while (true) {
                int type = in.read();
                if (type < 0) {
                    throw new IOException("MONITOR connection closed before the marker");
                }
                String line = RedisAdmin.readLine(in);
                if (type != '+') {
                    continue;
                }
                if (line.contains(marker)) {
                    return;
                }
                count(line);
            }
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            finished.countDown();
        }
    }

    /** Parses {@code 1700000000.123456 [0 127.0.0.1:5555] "evalsha" "..."}, or {@code [0 lua]}. */
    private void count(String line) {
        int open = line.indexOf('[');
        int close = line.indexOf(']', open);
        int quote = line.indexOf('"', close);
        if (open < 0 || close < 0 || quote < 0 || line.contains(ignoredClient)) {
            return;
        }
        int end = line.indexOf('"', quote + 1);
        String command = line.substring(quote + 1, end < 0 ? line.length() : end).toLowerCase(Locale.ROOT);
        if (line.substring(open, close).endsWith(" lua")) {
            scriptCommands.merge(command, 1L, Long::sum);
        } else {
            clientCommands.merge(command, 1L, Long::sum);
            clientTimes.add(Double.parseDouble(line.substring(0, line.indexOf(' '))));
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    /**
     * What the monitored clients sent.
     *
     * @param clientCommands commands sent by clients (round trips, or pipelined requests), by name
     * @param scriptCommands commands run inside scripts, by name
     * @param clientTimes the server time (seconds) of each client command, in order
     */
    record Counts(Map<String, Long> clientCommands, Map<String, Long> scriptCommands, List<Double> clientTimes) {

        long clientTotal() {
            return clientCommands.values().stream().mapToLong(Long::longValue).sum();
        }

        /**
         * Groups client commands into bursts separated by more than {@code gapSeconds} of
         * silence, the ticks of a watchdog, and returns how many commands each burst has.
         */
        List<Integer> bursts(double gapSeconds) {
            List<Integer> sizes = new ArrayList<>();
            double previous = Double.NEGATIVE_INFINITY;
            for (double time : clientTimes) {
                if (time - previous > gapSeconds) {
                    sizes.add(0);
                }
                sizes.set(sizes.size() - 1, sizes.get(sizes.size() - 1) + 1);
                previous = time;
            }
            return sizes;
        }
    }
}
