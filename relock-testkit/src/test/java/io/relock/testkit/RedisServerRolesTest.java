package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The builder options that the topologies are made of: replicaOf, configFile, sentinel. */
class RedisServerRolesTest {

    private static final Duration SYNC = Duration.ofSeconds(10);

    @Test
    void replicaOfStartsAReplicaThatFollowsItsMasterAgainAfterARestart() {
        // Without a delay, Redis 7 waits 5 seconds for more replicas before a full sync.
        try (RedisServer master = RedisServer.builder().arg("repl-diskless-sync-delay", "0").start();
             RedisServer replica = RedisServer.builder().replicaOf(master).start()) {
            awaitLinkUp(replica, master);
            master.command("SET", "k", "v");

            replica.command("REPLICAOF", "NO", "ONE");
            replica.restart();

            awaitLinkUp(replica, master);
            assertThat(replica.command("GET", "k")).isEqualTo("v");
        }
    }

    @Test
    void configFileIsReadAndOverriddenByTheCommandLineAndOutlivesTheServer(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("redis.conf");
        Files.writeString(file, "maxmemory 5mb\nport 6379\n", StandardCharsets.UTF_8);

        RedisServer server = RedisServer.builder().configFile(file).start();
        try {
            assertThat(server.port()).isNotEqualTo(6379);
            assertThat(server.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "5242880"));
            server.command("CONFIG", "SET", "maxmemory", "6mb");
            server.command("CONFIG", "REWRITE");

            server.restart();

            assertThat(server.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "6291456"));
        } finally {
            server.stop();
        }
        assertThat(file).exists();
    }

    @Test
    void sentinelNeedsAConfigFile() {
        assertThatThrownBy(() -> RedisServer.builder().sentinel().start())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("configFile");
        assertThatThrownBy(() -> RedisServer.builder().configFile(Path.of("/no/such/redis.conf")).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("configFile");
    }

    @Test
    void builderRejectsConflictingAndRepeatedRoles() {
        try (RedisServer master = RedisServer.start()) {
            assertThatThrownBy(() -> RedisServer.builder().replicaOf(master).replicaOf(master))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("replicaOf was already set");
            assertThatThrownBy(() -> RedisServer.builder().replicaOf(master).sentinel())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("conflicts");
            assertThatThrownBy(() -> RedisServer.builder().sentinel().replicaOf(master))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("conflicts");
        }
        assertThatThrownBy(() -> RedisServer.builder().configFile(Path.of("a")).configFile(Path.of("b")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("configFile was already set");
    }

    private static void awaitLinkUp(RedisServer replica, RedisServer master) {
        TopologySupport.await("replica linked to its master", SYNC, () -> {
            Map<String, String> replication = TopologySupport.info(replica, "replication");
            if (!Integer.toString(master.port()).equals(replication.get("master_port"))
                    || !"up".equals(replication.get("master_link_status"))) {
                throw new TopologySupport.NotReady("replica reports " + replication.get("master_port") + " / "
                        + replication.get("master_link_status"));
            }
            return Boolean.TRUE;
        }, List.of(master, replica));
    }
}
