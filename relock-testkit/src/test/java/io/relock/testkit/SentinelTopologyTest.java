package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One topology for the class; the extension restores and empties it before each test. */
class SentinelTopologyTest {

    private static final Duration FAILOVER = Duration.ofSeconds(30);

    @RegisterExtension
    static final SentinelExtension sentinel = SentinelExtension.perClass();

    @Test
    void startsWithAMasterTwoOnlineReplicasAndThreeSentinelsThatKnowEachOther(SentinelTopology topology) {
        RedisServer master = topology.master();

        assertThat(topology).isSameAs(sentinel.topology());
        assertThat(topology.masterName()).isEqualTo("mymaster");
        assertThat(topology.quorum()).isEqualTo(2);
        assertThat(topology.dataNodes()).hasSize(3).contains(master);
        assertThat(topology.replicas()).hasSize(2).doesNotContain(master);
        assertThat(topology.sentinels()).hasSize(3);
        Map<String, String> replication = TopologySupport.info(master, "replication");
        assertThat(replication).containsEntry("role", "master").containsEntry("connected_slaves", "2");
        assertThat(replication.get("slave0")).contains("state=online");
        assertThat(replication.get("slave1")).contains("state=online");
        for (RedisServer node : topology.sentinels()) {
            assertThat(TopologySupport.info(node, "server")).containsEntry("redis_mode", "sentinel");
            assertThat(TopologySupport.pairs(node.command("SENTINEL", "MASTER", "mymaster")))
                    .containsEntry("port", Integer.toString(master.port()))
                    .containsEntry("flags", "master")
                    .containsEntry("num-other-sentinels", "2")
                    .containsEntry("num-slaves", "2")
                    .containsEntry("quorum", "2")
                    .containsEntry("down-after-milliseconds", "1000")
                    .containsEntry("failover-timeout", "5000")
                    .containsEntry("parallel-syncs", "1");
        }
    }

    @Test
    void urisNameEverySentinel(SentinelTopology topology) {
        List<RedisServer> sentinels = topology.sentinels();

        assertThat(topology.sentinelUris()).containsExactly(sentinels.get(0).uri(), sentinels.get(1).uri(),
                sentinels.get(2).uri());
        assertThat(topology.sentinelUri()).isEqualTo("redis-sentinel://127.0.0.1:" + sentinels.get(0).port()
                + ",127.0.0.1:" + sentinels.get(1).port() + ",127.0.0.1:" + sentinels.get(2).port() + "#mymaster");
    }

    @Test
    void writeToTheMasterReachesEveryReplica(SentinelTopology topology) throws IOException {
        RedisServer master = topology.master();

        List<Object> replies = Resp.pipeline(master.host(), master.port(), Duration.ofSeconds(5),
                List.of(List.of("SET", "greeting", "hello"), List.of("WAIT", "2", "1000")));

        assertThat(replies).containsExactly("OK", 2L);
        for (RedisServer replica : topology.replicas()) {
            assertThat(replica.command("GET", "greeting")).isEqualTo("hello");
            assertThatThrownBy(() -> replica.command("SET", "greeting", "bye"))
                    .isInstanceOf(RedisServer.CommandException.class)
                    .hasMessageStartingWith("READONLY");
        }
    }

    @Test
    void failoverMovesTheMasterAndTheOldMasterBecomesAReplicaOfTheNewOne(SentinelTopology topology) {
        RedisServer old = topology.master();

        RedisServer promoted = topology.failover();

        assertThat(promoted).isNotSameAs(old).isIn(topology.dataNodes());
        assertThat(TopologySupport.info(promoted, "replication")).containsEntry("role", "master");
        for (RedisServer node : topology.sentinels()) {
            assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
                    .isEqualTo(List.of("127.0.0.1", Integer.toString(promoted.port())));
        }
        // Sentinel demotes a running old master only when it next inspects it, some seconds later.
        topology.awaitHealthy();
        assertThat(TopologySupport.info(old, "replication"))
                .containsEntry("role", "slave")
                .containsEntry("master_port", Integer.toString(promoted.port()))
                .containsEntry("master_link_status", "up");
        assertThat(topology.master()).isSameAs(promoted);
        assertThat(topology.replicas()).contains(old).doesNotContain(promoted);
    }

    @Test
    void killedMasterIsReplacedByTheSentinelsAndRestoreBringsItBackAsAReplica(SentinelTopology topology) {
        RedisServer old = topology.master();

        old.kill();
        RedisServer promoted = topology.awaitMasterChange(old, FAILOVER);

        assertThat(promoted).isNotSameAs(old);
        assertThat(TopologySupport.info(promoted, "replication")).containsEntry("role", "master");

        topology.restore();

        assertThat(old.isRunning()).isTrue();
        assertThat(topology.master()).isSameAs(promoted);
        assertThat(TopologySupport.info(old, "replication"))
                .containsEntry("role", "slave")
                .containsEntry("master_port", Integer.toString(promoted.port()))
                .containsEntry("master_link_status", "up");
        assertSettledOn(topology, promoted);
    }

    @Test
    void failoverRightAfterRestoreIsTheOnlyOneAndMovesTheEpochOnce(SentinelTopology topology) throws IOException {
        RedisServer old = topology.master();
        old.kill();
        RedisServer promoted = topology.awaitMasterChange(old, FAILOVER);
        topology.restore();
        long epoch = agreedConfigEpoch(topology);

        RedisServer next;
        Map<RedisServer, List<List<String>>> events;
        try (SentinelEvents watched = SentinelEvents.subscribe(topology, "+try-failover", "+new-epoch", "+switch-master")) {
            next = topology.failover();
            // failover() returns with the failover over: every Sentinel on the new master and epoch.
            assertThat(topology.master()).isSameAs(next);
            long moved = agreedConfigEpoch(topology);
            assertThat(moved).isGreaterThan(epoch);
            // The old master is demoted by the Sentinels, after which nothing else may happen.
            topology.awaitHealthy();
            assertThat(agreedConfigEpoch(topology)).isEqualTo(moved);
            events = watched.drain();
        }

        assertThat(next).isNotSameAs(promoted);
        assertThat(topology.master()).isSameAs(next);
        assertSettledOn(topology, next);
        long epochs = events.values().stream().flatMap(List::stream)
                .filter(event -> event.get(0).equals("+new-epoch")).map(event -> event.get(1)).distinct().count();
        assertThat(epochs).as("distinct new epochs in %s", events).isEqualTo(1);
        assertThat(events.values().stream().flatMap(List::stream).filter(event -> event.get(0).equals("+try-failover")))
                .as("failovers started, in %s", events).hasSize(1);
        String switched = "mymaster 127.0.0.1 " + promoted.port() + " 127.0.0.1 " + next.port();
        for (RedisServer sentinel : topology.sentinels()) {
            assertThat(events.get(sentinel).stream().filter(event -> event.get(0).equals("+switch-master")))
                    .as("master switches seen by the sentinel on port %d", sentinel.port())
                    .containsExactly(List.of("+switch-master", switched));
        }
    }

    @Test
    void restoreDemotesAResumedFormerMasterAndClosesItsClientsConnections(SentinelTopology topology) throws IOException {
        RedisServer old = topology.master();
        RedisServer promoted;
        try (Connection client = Connection.open(old)) {
            assertThat(client.call("SET", "written", "before the pause")).isEqualTo("OK");
            old.pause();
            promoted = topology.awaitMasterChange(old, FAILOVER);

            // Resumed, the old master still believes it is one; restore() demotes it as Sentinel would.
            topology.restore();

            assertThat(TopologySupport.info(old, "replication"))
                    .containsEntry("role", "slave")
                    .containsEntry("master_port", Integer.toString(promoted.port()));
            // Not READONLY on a connection that stays open: the connection is gone, so the client reconnects.
            assertThatThrownBy(() -> client.call("SET", "written", "after the demotion")).isInstanceOf(IOException.class);
        }
        assertThat(topology.master()).isSameAs(promoted);
        assertSettledOn(topology, promoted);
    }

    @Test
    void restoreResumesAndRestartsServersAndPointsRestartedReplicasAtTheMaster(SentinelTopology topology) {
        RedisServer master = topology.master();
        List<RedisServer> replicas = topology.replicas();
        RedisServer killedSentinel = topology.sentinels().get(0);
        killedSentinel.kill();
        topology.sentinels().get(1).pause();
        replicas.get(0).kill();
        replicas.get(1).pause();

        topology.restore();

        assertThat(topology.master()).isSameAs(master);
        for (RedisServer server : topology.dataNodes()) {
            assertThat(server.isRunning()).isTrue();
            assertThat(server.isPaused()).isFalse();
        }
        // The restarted sentinel kept its identity and knowledge in its config file.
        assertThat(TopologySupport.pairs(killedSentinel.command("SENTINEL", "MASTER", "mymaster")))
                .containsEntry("num-other-sentinels", "2")
                .containsEntry("num-slaves", "2");
        assertThat(TopologySupport.info(replicas.get(0), "replication"))
                .containsEntry("master_port", Integer.toString(master.port()))
                .containsEntry("master_link_status", "up");
    }

    @Test
    void awaitMasterChangeGivesUpWithTheReasonAndTheLogs(SentinelTopology topology) {
        RedisServer master = topology.master();

        assertThatThrownBy(() -> topology.awaitMasterChange(master, Duration.ofMillis(200)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a new master instead of port " + master.port() + " not reached within PT0.2S")
                .hasMessageContaining("the sentinels still report port " + master.port())
                .hasMessageContaining("--- port " + master.port());
        assertThatThrownBy(() -> topology.awaitMasterChange(topology.sentinels().get(0), FAILOVER))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("previous must be a data node");
    }

    @Test
    void builderRejectsInvalidAndRepeatedSettings() {
        assertThatThrownBy(() -> SentinelTopology.builder().replicas(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas");
        assertThatThrownBy(() -> SentinelTopology.builder().sentinels(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sentinels");
        assertThatThrownBy(() -> SentinelTopology.builder().replicas(1).replicas(1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("replicas was already set");
        assertThatThrownBy(() -> SentinelTopology.builder().masterName("my master"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masterName");
        assertThatThrownBy(() -> SentinelTopology.builder().downAfter(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("downAfter");
        assertThatThrownBy(() -> SentinelTopology.builder().sentinels(1).quorum(2).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("quorum");
    }

    /** Asserts what a settled topology promises: every Sentinel on {@code master}, idle, and up to date on every replica. */
    private static void assertSettledOn(SentinelTopology topology, RedisServer master) {
        for (RedisServer sentinel : topology.sentinels()) {
            assertThat(TopologySupport.pairs(sentinel.command("SENTINEL", "MASTER", "mymaster")))
                    .containsEntry("port", Integer.toString(master.port()))
                    .containsEntry("flags", "master")
                    .containsEntry("role-reported", "master")
                    .doesNotContainKey("failover-state");
            List<?> replicas = (List<?>) sentinel.command("SENTINEL", "REPLICAS", "mymaster");
            assertThat(replicas).hasSize(topology.dataNodes().size() - 1);
            for (Object replica : replicas) {
                assertThat(TopologySupport.pairs(replica))
                        .as("sentinel on port %d on a replica", sentinel.port())
                        .containsEntry("flags", "slave")
                        .containsEntry("role-reported", "slave")
                        .containsEntry("master-port", Integer.toString(master.port()))
                        .containsEntry("master-link-status", "ok");
            }
        }
        for (RedisServer node : topology.dataNodes()) {
            if (node != master) {
                assertThat(TopologySupport.info(node, "replication"))
                        .containsEntry("role", "slave")
                        .containsEntry("master_port", Integer.toString(master.port()))
                        .containsEntry("master_link_status", "up");
            }
        }
    }

    /** Returns the config epoch that every Sentinel reports for the master. */
    private static long agreedConfigEpoch(SentinelTopology topology) {
        List<String> epochs = topology.sentinels().stream()
                .map(sentinel -> TopologySupport.pairs(sentinel.command("SENTINEL", "MASTER", "mymaster")).get("config-epoch"))
                .distinct()
                .collect(Collectors.toList());
        assertThat(epochs).as("config epochs of the sentinels").hasSize(1);
        return Long.parseLong(epochs.get(0));
    }

    /** A connection of its own to a server: one that stays open across faults, or that subscribes. */
    private static final class Connection implements AutoCloseable {

        private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        private Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream());
            this.out = new BufferedOutputStream(socket.getOutputStream());
        }

        static Connection open(RedisServer server) throws IOException {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(server.host(), server.port()), (int) READ_TIMEOUT.toMillis());
                socket.setSoTimeout((int) READ_TIMEOUT.toMillis());
                return new Connection(socket);
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }

        void send(String... args) throws IOException {
            out.write(Resp.encode(args));
            out.flush();
        }

        Object read() throws IOException {
            return Resp.read(in);
        }

        /** Sends a command and returns its reply; an error reply is thrown. */
        Object call(String... args) throws IOException {
            send(args);
            Object reply = read();
            if (reply instanceof RedisServer.CommandException error) {
                throw error;
            }
            return reply;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** The events the Sentinels publish on some of their channels, as {@code [channel, message]}, per Sentinel. */
    private static final class SentinelEvents implements AutoCloseable {

        private final Map<RedisServer, Connection> connections = new LinkedHashMap<>();

        static SentinelEvents subscribe(SentinelTopology topology, String... channels) throws IOException {
            SentinelEvents events = new SentinelEvents();
            try {
                for (RedisServer sentinel : topology.sentinels()) {
                    Connection connection = Connection.open(sentinel);
                    events.connections.put(sentinel, connection);
                    List<String> command = new ArrayList<>(List.of("SUBSCRIBE"));
                    command.addAll(List.of(channels));
                    connection.send(command.toArray(new String[0]));
                    for (int i = 0; i < channels.length; i++) {
                        assertThat((List<?>) connection.read()).first().isEqualTo("subscribe");
                    }
                }
                return events;
            } catch (IOException | RuntimeException | AssertionError e) {
                events.close();
                throw e;
            }
        }

        /**
         * Returns the events published so far: a PING on a subscribed connection is answered
         * after every message published before it.
         */
        Map<RedisServer, List<List<String>>> drain() throws IOException {
            Map<RedisServer, List<List<String>>> events = new LinkedHashMap<>();
            for (Map.Entry<RedisServer, Connection> entry : connections.entrySet()) {
                List<List<String>> received = new ArrayList<>();
                entry.getValue().send("PING");
                for (List<?> reply = (List<?>) entry.getValue().read(); !"pong".equals(reply.get(0));
                        reply = (List<?>) entry.getValue().read()) {
                    received.add(List.of(String.valueOf(reply.get(1)), String.valueOf(reply.get(2))));
                }
                events.put(entry.getKey(), received);
            }
            return events;
        }

        @Override
        public void close() throws IOException {
            IOException failure = null;
            for (Connection connection : connections.values()) {
                try {
                    connection.close();
                } catch (IOException e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }
}
