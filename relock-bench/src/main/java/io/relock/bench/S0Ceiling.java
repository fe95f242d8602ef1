package io.relock.bench;

import io.relock.testkit.RedisServer;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * S0, the ceiling: what the same redis-server does for {@code redis-benchmark}, with no lock
 * library in the way — PING, and EVALSHA of a lock-shaped script (the reentrant acquire both
 * libraries use: EXISTS/HEXISTS, HINCRBY, PEXPIRE, or PTTL), with 1 and 50 connections. Runs
 * in the driver; needs the {@code redis-benchmark} binary (on PATH or next to redis-server).
 */
final class S0Ceiling {

    /** Lock-shaped: the acquire script of the reentrant lock, as Redisson and Relock run it. */
    static final String LOCK_SCRIPT = "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
            + "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
            + "return redis.call('pttl', KEYS[1]);";

    static final int[] CONNECTIONS = {1, 50};

    /**
     * One redis-benchmark result.
     *
     * @param test {@code PING} or {@code EVALSHA lock}
     */
    record Row(int repeat, String test, int connections, double requestsPerSecond, double p50Millis, double p99Millis) {

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("repeat", repeat);
            json.put("test", test);
            json.put("connections", connections);
            json.put("requests_per_s", requestsPerSecond);
            json.put("p50_ms", p50Millis);
            json.put("p99_ms", p99Millis);
            return json;
        }
    }

    private S0Ceiling() {
    }

    /** redis-benchmark on PATH, else next to the redis-server binary, else null. */
    static Path locate(Path redisServer) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                if (!entry.isEmpty()) {
                    Path candidate = Path.of(entry, "redis-benchmark");
                    if (Files.isExecutable(candidate)) {
                        return candidate;
                    }
                }
            }
        }
        Path sibling = redisServer.resolveSibling("redis-benchmark");
        return Files.isExecutable(sibling) ? sibling : null;
    }

    /** Runs PING and EVALSHA with 1 and 50 connections, each for about {@code duration}. */
    static List<Row> run(Path benchmark, RedisServer server, Duration duration, int repeat) throws IOException {
        String sha = (String) server.command("SCRIPT", "LOAD", LOCK_SCRIPT);
        List<Row> rows = new ArrayList<>();
        for (int connections : CONNECTIONS) {
            rows.add(measure(benchmark, server, duration, repeat, "PING", connections, List.of("PING")));
        }
        for (int connections : CONNECTIONS) {
            rows.add(measure(benchmark, server, duration, repeat, "EVALSHA lock", connections,
                    List.of("EVALSHA", sha, "1", "bench:s0:__rand_int__", "30000", "bench-owner")));
        }
        server.flushAll();
        return rows;
    }

    /** A short run to learn the rate, then one of about {@code window}. */
    private static Row measure(Path benchmark, RedisServer server, Duration window, int repeat, String test,
            int connections, List<String> command) throws IOException {
        double[] probe = runOnce(benchmark, server, connections, connections * 200, command);
        long requests = Math.max(1000, Math.min(20_000_000L, Math.round(probe[0] * window.toMillis() / 1000.0)));
        double[] measured = runOnce(benchmark, server, connections, requests, command);
        return new Row(repeat, test, connections, measured[0], measured[1], measured[2]);
    }

    /** Returns requests/s, p50 ms and p99 ms from redis-benchmark's CSV output. */
    private static double[] runOnce(Path benchmark, RedisServer server, int connections, long requests,
            List<String> command) throws IOException {
        List<String> line = new ArrayList<>(List.of(benchmark.toString(), "-h", RedisServer.HOST,
                "-p", Integer.toString(server.port()), "-c", Integer.toString(connections),
                "-n", Long.toString(requests), "-r", "10000", "--csv"));
        line.addAll(command);
        Path output = Files.createTempFile("relock-bench-s0-", ".csv");
        try {
            Process process = new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            process.getOutputStream().close();
            try {
                if (!process.waitFor(5, TimeUnit.MINUTES)) {
                    process.destroyForcibly();
                    throw new IOException("redis-benchmark did not finish within 5 minutes: " + line);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while running redis-benchmark", e);
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IOException("redis-benchmark failed with exit code " + process.exitValue() + ": " + text);
            }
            // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
            String[] lines = text.trim().split("\n");
            String[] fields = lines[lines.length - 1].replace("\"", "").split(",");
            int n = fields.length;
            try {
                return new double[] {Double.parseDouble(fields[n - 7]), Double.parseDouble(fields[n - 4]),
                        Double.parseDouble(fields[n - 2])};
            } catch (RuntimeException e) {
                throw new IOException("cannot read redis-benchmark's output: " + text, e);
            }
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
