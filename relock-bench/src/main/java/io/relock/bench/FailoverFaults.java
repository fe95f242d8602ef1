package io.relock.bench;

import static io.relock.bench.FailoverWorkload.CLIENTS;
import static io.relock.bench.FailoverWorkload.REPLICA_SYNC_TIMEOUT;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.bench.FailoverOptions.Mode;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntPredicate;

/**
 * The faults of one mode of {@link FailoverRun} and what is looked at around them: probe holds
 * taken by a client of their own, the waits for the Sentinels to see the replicas, and the
 * closing of Relock connections that a network blip, or Sentinel's own demotion, would close.
 */
final class FailoverFaults implements AutoCloseable {

    /** Clients whose connections to a deposed master are closed first; they lock on the new master meanwhile. */
    static final IntPredicate DETACHED_FIRST = client -> client >= CLIENTS / 2;
    static final Duration TOPOLOGY_TIMEOUT = Duration.ofSeconds(60);
    private static final long PROBE_LEASE_MILLIS = 60_000;
    /** The probe client's owner id (it uses the async API, so no thread owns its holds). */
    private static final long PROBE_OWNER = 1;
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

    private final SentinelTopology topology;
    private final Mode mode;
    private final FailoverWorkload workload;
    private final String prefix;
    private final Relock probeClient;

    FailoverFaults(SentinelTopology topology, Mode mode, FailoverWorkload workload, String prefix) {
        this.topology = topology;
        this.mode = mode;
        this.workload = workload;
        this.prefix = prefix;
        this.probeClient = Relock.create(FailoverWorkload.config(topology, mode));
    }

    /** {@return a probe hold of the probe client, on lock {@code prefix + name}, not taken yet} */
    Probe probe(String name) {
        return new Probe(probeClient, prefix + name);
    }

    /**
     * Waits until every Sentinel has seen every replica report the replica role.
     * {@code restore()} demotes a restarted former master itself, and a Sentinel polls
     * replicas only every 10 s: until it sees the demotion, it holds the node for a master it
     * must convert, and converts it back if a failover promotes it meanwhile — which aborts
     * that failover.
     */
    void awaitSentinelsSeeReplicas() throws InterruptedException {
        long deadline = System.nanoTime() + TOPOLOGY_TIMEOUT.toNanos();
        for (List<String> stale = staleRoleViews(); !stale.isEmpty(); stale = staleRoleViews()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the sentinels still take replicas for masters: " + stale);
            }
            TimeUnit.MILLISECONDS.sleep(50); // Sentinel has no notification for this; polled
        }
    }

    private List<String> staleRoleViews() {
        List<String> stale = new ArrayList<>();
        for (RedisServer sentinel : topology.sentinels()) {
            for (Object replica : (List<?>) sentinel.command("SENTINEL", "REPLICAS", topology.masterName())) {
                List<?> fields = (List<?>) replica;
                for (int i = 0; i + 1 < fields.size(); i += 2) {
                    if ("role-reported".equals(fields.get(i)) && !"slave".equals(fields.get(i + 1))) {
                        stale.add("sentinel " + sentinel.port() + " on " + fields.get(1));
                    }
                }
            }
        }
        return stale;
    }

    /**
     * Takes a probe hold through the probe client, which is still connected to the deposed
     * master (a master still, but with no replica left). With replica sync on, the acquire's
     * WAIT blocks there; the connection is then closed under it, as a network blip would.
     */
    Probe takeOnDeposedMaster(int number, RedisServer deposed) throws InterruptedException {
        Probe probe = probe("deposed:" + number);
        probe.start();
        String closed = mode.replicas == 0 ? ""
                : closeBlockedWait(deposed) ? ", connection closed during WAIT" : ", WAIT not seen blocking";
        probe.finish();
        probe.outcome += closed;
        if (probe.acquired && deposed.isRunning() && probe.on(deposed)) {
            probe.outcome += ", on the deposed master";
        }
        return probe;
    }

    /** Closes the probe client's connection to {@code server} once it blocks in WAIT; false if it never did. */
    private boolean closeBlockedWait(RedisServer server) {
        String name = "relock:" + probeClient.clientId();
        long deadline = System.nanoTime() + REPLICA_SYNC_TIMEOUT.toNanos();
        // Each CLIENT LIST is a round trip on a new connection, which paces this poll.
        while (System.nanoTime() - deadline < 0) {
            for (Map<String, String> connection : clientList(server)) {
                if (name.equals(connection.get("name")) && "wait".equals(connection.get("cmd"))
                        && connection.getOrDefault("flags", "").contains("b")) {
                    kill(server, connection.get("id"));
                    return true;
                }
            }
        }
        return false;
    }

    /** Closes the Relock connections (commands and pub/sub) of the chosen clients on {@code server}. */
    int disconnect(RedisServer server, IntPredicate chosen, boolean probeToo) {
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < CLIENTS; i++) {
            if (chosen.test(i)) {
                names.add(workload.clientName(i));
            }
        }
        if (probeToo) {
            names.add("relock:" + probeClient.clientId());
        }
        int closed = 0;
        for (Map<String, String> connection : clientList(server)) {
            if (names.contains(connection.get("name"))) {
                kill(server, connection.get("id"));
                closed++;
            }
        }
        return closed;
    }

    /** Which node each client's connections are on, for a failure message. */
    String connections() {
        List<String> nodes = new ArrayList<>();
        for (RedisServer node : topology.dataNodes()) {
            if (!node.isRunning()) {
                nodes.add(node.port() + " down");
                continue;
            }
            List<Map<String, String>> list = clientList(node);
            List<String> on = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                String name = workload.clientName(i);
                long count = list.stream().filter(connection -> name.equals(connection.get("name"))).count();
                if (count > 0) {
                    on.add("client " + i + " ×" + count);
                }
            }
            nodes.add(node.port() + " " + node.info("replication").lines().filter(l -> l.startsWith("role:"))
                    .findFirst().orElse("role:?") + " " + on);
        }
        return String.join(", ", nodes);
    }

    private static List<Map<String, String>> clientList(RedisServer server) {
        List<Map<String, String>> connections = new ArrayList<>();
        for (String line : String.valueOf(server.command("CLIENT", "LIST")).split("\n")) {
            Map<String, String> fields = new TreeMap<>();
            for (String pair : line.trim().split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            connections.add(fields);
        }
        return connections;
    }

    private static void kill(RedisServer server, String id) {
        try {
            server.command("CLIENT", "KILL", "ID", id);
        } catch (RedisServer.CommandException e) {
            // Gone already: the client closed it itself.
        }
    }

    @Override
    public void close() {
        probeClient.close();
    }

    enum Fault {
        KILL("kill"), SENTINEL_FAILOVER("Sentinel failover");

        final String label;

        Fault(String label) {
            this.label = label;
        }
    }

    /** One probe hold: taken by the probe client, then looked for on the promoted master. */
    static final class Probe {

        final String name;
        final DistributedLock lock;
        final String field;
        CompletableFuture<Boolean> reply;
        String outcome;
        boolean acquired;

        Probe(Relock client, String name) {
            this.name = name;
            this.lock = client.getLock(name);
            this.field = client.clientId() + ":" + PROBE_OWNER;
        }

        void start() {
            reply = lock.tryLockAsync(0, PROBE_LEASE_MILLIS, TimeUnit.MILLISECONDS, PROBE_OWNER).toCompletableFuture();
        }

        void finish() throws InterruptedException {
            try {
                acquired = reply.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                outcome = acquired ? "acknowledged" : "not acquired";
            } catch (ExecutionException e) {
                outcome = "refused (" + e.getCause().getClass().getSimpleName() + ")";
            } catch (TimeoutException e) {
                outcome = "no answer within " + PROBE_TIMEOUT.toSeconds() + " s";
            }
        }

        boolean on(RedisServer server) {
            return Long.valueOf(1).equals(server.command("HEXISTS", name, field));
        }

        void release() throws InterruptedException {
            if (!acquired) {
                return;
            }
            try {
                lock.unlockAsync(PROBE_OWNER).toCompletableFuture()
                        .get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                outcome += ", unlock: " + e.getCause().getClass().getSimpleName();
            } catch (TimeoutException e) {
                outcome += ", unlock: no answer within " + PROBE_TIMEOUT.toSeconds() + " s";
            }
        }
    }
}
