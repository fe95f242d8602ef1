package io.relock.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The bench's own connection to a Redis server, outside the libraries under test: it resets
 * and reads the server's statistics, flushes data, and sends markers. A tiny RESP2 client on
 * a plain socket, so that its own commands are easy to tell apart (by its local port) and cost
 * the libraries nothing. Not thread-safe.
 */
final class RedisAdmin implements AutoCloseable {

    /** Commands the bench itself sends; never counted as a library's. */
    static final List<String> OWN_COMMANDS = List.of("info", "config|resetstat", "flushall", "echo", "monitor",
            "dbsize", "scan");

    private static final int TIMEOUT_MILLIS = 10_000;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String uri;

    RedisAdmin(String uri) {
        this.uri = uri;
        URI parsed = URI.create(uri);
        try {
            socket = new Socket();
            socket.connect(new InetSocketAddress(parsed.getHost(), parsed.getPort()), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            socket.setTcpNoDelay(true);
            in = new BufferedInputStream(socket.getInputStream());
            out = new BufferedOutputStream(socket.getOutputStream());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot connect to " + uri, e);
        }
    }

    /** The local port of this connection, as MONITOR and CLIENT LIST show it. */
    int localPort() {
        return socket.getLocalPort();
    }

    String uri() {
        return uri;
    }

    /**
     * Runs one command; replies map to String, Long, List or null; an error reply throws.
     *
     * @throws IllegalStateException if Redis answers with an error
     * @throws UncheckedIOException if the connection fails or times out
     */
    Object call(String... args) {
        try {
            write(out, args);
            out.flush();
            return read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(args[0] + " on " + uri + " failed", e);
        }
    }

    String info(String section) {
        return (String) call("INFO", section);
    }

    void flushAll() {
        call("FLUSHALL");
    }

    /** How many keys match {@code pattern} (SCAN, so not one blocking call over a large keyspace). */
    long countKeys(String pattern) {
        long count = 0;
        String cursor = "0";
        do {
            List<?> page = (List<?>) call("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
            cursor = (String) page.get(0);
            count += ((List<?>) page.get(1)).size();
        } while (!cursor.equals("0"));
        return count;
    }

    /** Zeroes the command statistics ({@code CONFIG RESETSTAT}); CPU counters are not reset by Redis. */
    void resetStats() {
        call("CONFIG", "RESETSTAT");
    }

    /** One field of an INFO section, e.g. {@code connected_clients} of {@code clients}. */
    String infoField(String section, String field) {
        return parseInfo(info(section)).get(field);
    }

    /** A snapshot of the server's per-command call counts and CPU time. */
    ServerStats stats() {
        // Both sections in one write, so that Redis answers them back to back, with no client
        // command in between.
        String commandStats;
        String cpuInfo;
        try {
            write(out, "INFO", "commandstats");
            write(out, "INFO", "cpu");
            out.flush();
            commandStats = (String) read(in);
            cpuInfo = (String) read(in);
        } catch (IOException e) {
            throw new UncheckedIOException("INFO on " + uri + " failed", e);
        }
        Map<String, Long> calls = new HashMap<>();
        for (Map.Entry<String, String> entry : parseInfo(commandStats).entrySet()) {
            String command = entry.getKey().substring("cmdstat_".length());
            for (String part : entry.getValue().split(",")) {
                if (part.startsWith("calls=")) {
                    calls.put(command, Long.parseLong(part.substring("calls=".length())));
                }
            }
        }
        for (String own : OWN_COMMANDS) {
            calls.remove(own);
        }
        Map<String, String> cpu = parseInfo(cpuInfo);
        double cpuSeconds = Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
        return new ServerStats(Collections.unmodifiableMap(calls), cpuSeconds);
    }

    static Map<String, String> parseInfo(String text) {
        Map<String, String> fields = new HashMap<>();
        for (String line : text.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    static void write(OutputStream out, String... args) throws IOException {
        StringBuilder frame = new StringBuilder().append('*').append(args.length).append("\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            frame.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
        }
        out.write(frame.toString().getBytes(StandardCharsets.UTF_8));
    }

    static Object read(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new IOException("connection closed by the server");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IllegalStateException("Redis error: " + line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                if (bytes.length < length + 2) {
                    throw new IOException("connection closed in a bulk reply");
                }
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type '" + (char) type + "'");
        }
    }

    /** Reads up to CRLF; RESP simple lines never contain a bare CR or LF. */
    static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed in a line");
            }
            if (c == '\r') {
                int lf = in.read();
                if (lf != '\n') {
                    throw new IOException("CR without LF");
                }
                return line.toString();
            }
            line.append((char) c);
        }
    }

    /**
     * Calls per command and the server's CPU time at one moment.
     *
     * @param calls calls per command name as INFO commandstats names them (subcommands as
     *     {@code config|get}), including commands run inside scripts, without the bench's own
     * @param cpuSeconds {@code used_cpu_user + used_cpu_sys}
     */
    record ServerStats(Map<String, Long> calls, double cpuSeconds) {

        long totalCalls() {
            return calls.values().stream().mapToLong(Long::longValue).sum();
        }

        /** Calls of EVAL, EVALSHA and their read-only forms: the script round trips. */
        long scriptCalls() {
            return calls.entrySet().stream().filter(entry -> entry.getKey().startsWith("eval"))
                    .mapToLong(Map.Entry::getValue).sum();
        }

        /** What happened between {@code earlier} and this snapshot. */
        ServerStats minus(ServerStats earlier) {
            Map<String, Long> delta = new HashMap<>(calls);
            earlier.calls.forEach((command, count) -> delta.merge(command, -count, Long::sum));
            return new ServerStats(Collections.unmodifiableMap(delta), cpuSeconds - earlier.cpuSeconds);
        }

        /** Sum of two snapshots (for several servers). */
        ServerStats plus(ServerStats other) {
            Map<String, Long> sum = new HashMap<>(calls);
            other.calls.forEach((command, count) -> sum.merge(command, count, Long::sum));
            return new ServerStats(Collections.unmodifiableMap(sum), cpuSeconds + other.cpuSeconds);
        }
    }
}
