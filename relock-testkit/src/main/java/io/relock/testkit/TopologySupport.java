package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What {@link SentinelTopology} and {@link ClusterTopology} share: bounded polling for a state
 * of the topology, reading {@code INFO}-style replies, and the diagnostics for a failed wait.
 */
final class TopologySupport {

    /** Bounds each command of a probe: a stuck node must not stall the whole wait. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

    /** Pause between two probes of a wait; the state is the topology's, not ours to signal. */
    private static final long POLL_MILLIS = 50;
    private static final int LOG_TAIL_LINES = 12;
    /** Sentinel names its connections {@code sentinel-<first 8 characters of its id>-cmd} and {@code ...-pubsub}. */
    private static final String SENTINEL_CLIENT_PREFIX = "sentinel-";
    /** The client types whose connections a demotion closes; replication links have other types. */
    private static final List<String> CLIENT_TYPES_CLOSED_ON_DEMOTION = List.of("normal", "pubsub");

    private TopologySupport() {
    }

    /**
     * Thrown by a probe whose state is not reached yet; the message says what is missing, and
     * becomes part of the timeout message if it is the last one.
     */
    static final class NotReady extends RuntimeException {

        private static final long serialVersionUID = 1L;

        NotReady(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Runs {@code probe} until it returns without throwing {@link NotReady}, an
     * {@link UncheckedIOException} (a node that does not answer) or a
     * {@link RedisServer.CommandException} (a node that is loading, for example), at most
     * {@code timeout}, and returns what it returned. Other exceptions end the wait.
     *
     * @param goal what is awaited, for the timeout message: "... not reached within ..."
     * @param servers whose log tails the timeout message includes
     * @throws IllegalStateException on timeout, with the last reason and the log tails; or if
     *     the thread is interrupted (the interrupt flag stays set)
     */
    static <T> T await(String goal, Duration timeout, Supplier<T> probe, List<RedisServer> servers) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String reason;
            try {
                return probe.get();
            } catch (NotReady | UncheckedIOException | RedisServer.CommandException e) {
                reason = e.getMessage();
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException(goal + " not reached within " + timeout + ": " + reason + "\n"
                        + logTails(servers));
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for: " + goal + " (last: " + reason + ")", e);
            }
        }
    }

    /** Returns the time left until {@code deadline} (a {@link System#nanoTime()}), at least a millisecond. */
    static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(Duration.ofMillis(1).toNanos(), deadline - System.nanoTime()));
    }

    /** Returns whether the server's process is alive and not paused, so that it can answer. */
    static boolean reachable(RedisServer server) {
        return server.isRunning() && !server.isPaused();
    }

    /**
     * Throws {@link NotReady} unless the server is {@linkplain #reachable reachable}.
     *
     * @param role how the message names it, e.g. {@code "sentinel"}
     */
    static void requireReachable(RedisServer server, String role) {
        if (!server.isRunning()) {
            throw new NotReady(role + " on port " + server.port() + " is not running");
        }
        if (server.isPaused()) {
            throw new NotReady(role + " on port " + server.port() + " is paused");
        }
    }

    /** Throws {@link NotReady} unless {@code actual} is {@code expected}; {@code what} names the number. */
    static void expect(String what, int expected, String actual) {
        if (!Integer.toString(expected).equals(actual)) {
            throw new NotReady(what + ": " + actual + " instead of " + expected);
        }
    }

    /** Runs a command with the {@linkplain #PROBE_TIMEOUT probe timeout}. */
    static Object probe(RedisServer server, String... args) {
        return server.command(PROBE_TIMEOUT, args);
    }

    /** Returns the {@code name:value} lines of an {@code INFO}-style text (also {@code CLUSTER INFO}). */
    static Map<String, String> parseInfo(Object text) {
        Map<String, String> fields = new HashMap<>();
        for (String line : ((String) text).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    /** Returns {@code INFO <section>} of the server, parsed. */
    static Map<String, String> info(RedisServer server, String section) {
        return parseInfo(probe(server, "INFO", section));
    }

    /** Returns a flat {@code [name, value, name, value, ...]} reply (as {@code SENTINEL MASTER} gives) as a map. */
    static Map<String, String> pairs(Object reply) {
        List<?> list = (List<?>) reply;
        Map<String, String> fields = new HashMap<>();
        for (int i = 0; i + 1 < list.size(); i += 2) {
            fields.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
        }
        return fields;
    }

    /**
     * Makes {@code node} a replica of {@code master} the way a Sentinel reconfigures a node:
     * {@code REPLICAOF} and, in the same {@code MULTI}/{@code EXEC}, {@code CLIENT KILL ID <id>
     * TYPE normal|pubsub SKIPME yes} for every client connection of those two types that is open
     * when it starts, except the Sentinels' own (named {@code sentinel-...}). Clients of a node
     * that was a master thus lose their connection and ask again where the master is, instead of
     * getting {@code READONLY} on it until it happens to close; replication links (types
     * {@code master} and {@code replica}) stay.
     *
     * @throws UncheckedIOException if the node does not answer
     * @throws RedisServer.CommandException if it refuses a command
     */
    static void replicaOfClosingClients(RedisServer node, RedisServer master) {
        List<List<String>> commands = new ArrayList<>();
        commands.add(List.of("MULTI"));
        commands.add(List.of("REPLICAOF", master.host(), Integer.toString(master.port())));
        for (String type : CLIENT_TYPES_CLOSED_ON_DEMOTION) {
            for (String client : ((String) probe(node, "CLIENT", "LIST", "TYPE", type)).split("\r?\n")) {
                Map<String, String> fields = clientFields(client);
                if (fields.containsKey("id") && !fields.getOrDefault("name", "").startsWith(SENTINEL_CLIENT_PREFIX)) {
                    commands.add(List.of("CLIENT", "KILL", "ID", fields.get("id"), "TYPE", type, "SKIPME", "yes"));
                }
            }
        }
        commands.add(List.of("EXEC"));
        List<Object> replies;
        try {
            replies = Resp.pipeline(node.host(), node.port(), PROBE_TIMEOUT, commands);
        } catch (IOException e) {
            throw new UncheckedIOException("REPLICAOF on " + node.uri() + " failed: " + e.getMessage(), e);
        }
        for (Object reply : (List<?>) replies.get(replies.size() - 1)) {
            if (reply instanceof RedisServer.CommandException error) {
                throw error;
            }
        }
    }

    /** Returns the {@code name=value} fields of one line of {@code CLIENT LIST}. */
    private static Map<String, String> clientFields(String line) {
        Map<String, String> fields = new HashMap<>();
        for (String field : line.trim().split(" ")) {
            int equals = field.indexOf('=');
            if (equals > 0) {
                fields.put(field.substring(0, equals), field.substring(equals + 1));
            }
        }
        return fields;
    }

    /**
     * Runs {@code FLUSHALL} on {@code master} and waits, on the same connection, until
     * {@code replicas} replicas have acknowledged it.
     *
     * @throws IllegalStateException if fewer replicas acknowledge it within {@code timeout}
     */
    static void flushAndAwaitReplicas(RedisServer master, int replicas, Duration timeout) {
        List<Object> replies;
        try {
            replies = Resp.pipeline(master.host(), master.port(), timeout.plus(RedisServer.DEFAULT_COMMAND_TIMEOUT),
                    List.of(List.of("FLUSHALL"), List.of("WAIT", Integer.toString(replicas), Long.toString(timeout.toMillis()))));
        } catch (IOException e) {
            throw new UncheckedIOException("FLUSHALL on " + master.uri() + " failed: " + e.getMessage(), e);
        }
        long acknowledged = (Long) replies.get(1);
        if (acknowledged < replicas) {
            throw new IllegalStateException("FLUSHALL on " + master.uri() + " reached " + acknowledged + " of its " + replicas
                    + " replicas within " + timeout);
        }
    }

    /**
     * Stops every server, even if some fail to stop.
     *
     * @param failure an exception that is already on its way, to which stop failures are
     *     added as suppressed; or null
     * @return {@code failure}, or the first stop failure if {@code failure} is null (with the
     *     others suppressed), or null if there was none
     */
    static RuntimeException stopAll(List<RedisServer> servers, RuntimeException failure) {
        RuntimeException result = failure;
        for (RedisServer server : servers) {
            try {
                server.stop();
            } catch (RuntimeException e) {
                if (result == null) {
                    result = e;
                } else {
                    result.addSuppressed(e);
                }
            }
        }
        return result;
    }

    /** Creates a directory for a topology's own files (config files that outlive its servers' restarts). */
    static Path createDirectory(String prefix) {
        try {
            return Files.createTempDirectory(Workspace.jvmDirectory(), Objects.requireNonNull(prefix));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for a topology", e);
        }
    }

    /** Returns the last lines of each server's log, for a failure message. */
    static String logTails(List<RedisServer> servers) {
        StringBuilder text = new StringBuilder();
        for (RedisServer server : servers) {
            Path log = server.directory().resolve(RedisServer.LOG_FILE);
            text.append("--- port ").append(server.port())
                    .append(server.isRunning() ? (server.isPaused() ? " (paused)" : "") : " (not running)")
                    .append(", ").append(log).append('\n');
            try {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                for (String line : lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())) {
                    text.append(line).append('\n');
                }
            } catch (NoSuchFileException e) {
                text.append("(no log)\n");
            } catch (IOException e) {
                text.append("(cannot read the log: ").append(e).append(")\n");
            }
        }
        return text.toString();
    }
}
