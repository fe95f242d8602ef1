package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Passwords and databases given in the server URI. */
class ConnectionSettingsTest {

    private static final String PASSWORD = "s3cret-pw";

    @Test
    void aPasswordInTheUriIsUsedAndAWrongOneFailsAtCreateWithoutShowingIt() {
        try (RedisServer server = RedisServer.start()) {
            server.command("CONFIG", "SET", "requirepass", PASSWORD);
            String base = "127.0.0.1:" + server.port();
            try (Relock relock = Relock.create(RelockConfig.builder()
                    .singleServer("redis://:" + PASSWORD + "@" + base).build())) {
                DistributedLock lock = relock.getLock("guarded");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder()
                    .singleServer("redis://:wrong-" + PASSWORD + "@" + base).build()))
                    .isInstanceOf(RelockConnectionException.class)
                    .hasMessageContaining(base)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(PASSWORD));
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder().singleServer("redis://" + base).build()))
                    .isInstanceOf(RelockConnectionException.class);
        }
    }

    @Test
    void theDatabaseInTheUriHoldsTheLocks() {
        try (RedisServer server = RedisServer.start();
                Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri() + "/3").build())) {
            DistributedLock lock = relock.getLock("in-db-3");
            lock.lock();
            assertThat(server.info("keyspace")).as("the lock and the client's registry entry")
                    .contains("db3:keys=2");
            assertThat(server.command("EXISTS", "in-db-3")).as("not in db 0").isEqualTo(0L);
            lock.unlock();
        }
    }

    @Test
    void replicaSyncFailsAtCreateWhenTheServerRefusesWait() {
        try (RedisServer server = RedisServer.start()) {
            server.command("ACL", "SETUSER", "nowait", "on", ">pw", "~*", "&*", "+@all", "-wait");
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder()
                    .singleServer("redis://nowait:pw@127.0.0.1:" + server.port())
                    .replicaSync(1, Duration.ofMillis(100)).build()))
                    .isInstanceOf(RelockConnectionException.class)
                    .hasMessageContaining("replicaSync").hasMessageContaining("WAIT")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(":pw@"));
        }
    }

    @Test
    void replicaSyncWithoutReplicasRefusesEveryAcquireAndLeavesNothingHeld() {
        try (RedisServer server = RedisServer.start();
                Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri())
                        .replicaSync(1, Duration.ofMillis(50)).build())) {
            DistributedLock lock = relock.getLock("lonely");
            assertThatThrownBy(() -> lock.tryLock(200, TimeUnit.MILLISECONDS))
                    .isInstanceOf(RelockReplicaSyncException.class).hasMessageContaining("lonely");
            assertThat(server.command("EXISTS", "lonely")).isEqualTo(0L);
            assertThat(lock.isLocked()).isFalse();
        }
    }
}
