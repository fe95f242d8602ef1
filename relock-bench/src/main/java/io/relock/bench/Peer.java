package io.relock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.Lock;

/**
 * The JVM of S3's waiter in another process, started by a worker ({@link PeerProcess}) with the
 * worker's own flags and classpath:
 * <pre>
 * Peer --library relock --uri redis://127.0.0.1:PORT --lock NAME
 * </pre>
 * It connects one client of the library, prints {@code READY}, then answers one request per
 * line of its stdin, each with one line on stdout:
 * <ul>
 *   <li>{@code LOCK}: {@code lock()}, then {@code LOCKED <nanoTime when lock() returned>};</li>
 *   <li>{@code UNLOCK}: notes the time, {@code unlock()}, then {@code UNLOCKED <that time>};</li>
 *   <li>{@code CLOCK}: {@code CLOCK <nanoTime>}, to check that both JVMs read one clock;</li>
 *   <li>{@code CPU}: {@code CPU <this process's CPU time in ns>}.</li>
 * </ul>
 * A failure is answered with {@code ERROR <what>} (the stack trace goes to stderr) and ends the
 * process. End of stdin means the worker is done or gone: it closes the client and exits.
 */
public final class Peer {

    static final String READY = "READY";
    static final String ERROR = "ERROR";

    private Peer() {
    }

    public static void main(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            flags.put(args[i].substring(2), args[i + 1]);
        }
        PrintStream out = System.out;
        int status = 0;
        try (LockLibrary client = Library.fromId(flags.get("library")).connect(flags.get("uri"), null)) {
            Lock lock = client.lock(flags.get("lock"));
            answer(out, READY);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String request = in.readLine(); request != null; request = in.readLine()) {
                switch (request) {
                    case "LOCK" -> {
                        lock.lock();
                        answer(out, "LOCKED " + System.nanoTime());
                    }
                    case "UNLOCK" -> {
                        long releasedAt = System.nanoTime();
                        lock.unlock();
                        answer(out, "UNLOCKED " + releasedAt);
                    }
                    case "CLOCK" -> answer(out, "CLOCK " + System.nanoTime());
                    case "CPU" -> answer(out, "CPU " + Load.processCpuNanos());
                    default -> throw new IllegalArgumentException("unknown request: " + request);
                }
            }
        } catch (Throwable e) {
            e.printStackTrace();
            answer(out, ERROR + " " + String.valueOf(e).replace('\n', ' '));
            status = 1;
        }
        // A library may leave non-daemon threads behind.
        System.exit(status);
    }

    private static void answer(PrintStream out, String line) {
        out.println(line);
        out.flush();
    }
}
