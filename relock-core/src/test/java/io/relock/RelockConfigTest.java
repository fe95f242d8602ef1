package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RelockConfigTest {

    @Test
    void defaultsAreTheNamedConstants() {
        RelockConfig config = RelockConfig.builder().singleServer("redis://localhost:6379").build();
        assertThat(config.topology()).isEqualTo(RelockConfig.Topology.SINGLE_SERVER);
        assertThat(config.serverUris()).containsExactly("redis://localhost:6379");
        assertThat(config.watchdogTimeout()).isEqualTo(RelockConfig.DEFAULT_WATCHDOG_TIMEOUT);
        assertThat(config.commandTimeout()).isEqualTo(RelockConfig.DEFAULT_COMMAND_TIMEOUT);
        assertThat(config.keyPrefix()).isEqualTo(RelockConfig.DEFAULT_KEY_PREFIX);
    }

    @Test
    void aServerIsRequired() {
        assertThatThrownBy(() -> RelockConfig.builder().build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("singleServer");
    }

    @Test
    void aSettingCannotBeGivenTwice() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://a").singleServer("redis://b"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("singleServer");
        assertThatThrownBy(() -> RelockConfig.builder().watchdogTimeout(Duration.ofSeconds(1))
                .watchdogTimeout(Duration.ofSeconds(2)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("watchdogTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().keyPrefix("a").keyPrefix("b"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("keyPrefix");
    }

    @Test
    void invalidValuesAreRejectedAtBuildNamingTheSetting() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h").watchdogTimeout(Duration.ofMillis(5))
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("watchdogTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h").commandTimeout(Duration.ZERO)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h")
                .commandTimeout(Duration.ofSeconds(-1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("localhost:6379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("singleServer");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("http://localhost").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("singleServer");
    }

    @Test
    void nullsAreRejectedNamingTheArgument() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("uri");
        assertThatThrownBy(() -> RelockConfig.builder().watchdogTimeout(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("watchdogTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().commandTimeout(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RelockConfig.builder().keyPrefix(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> Relock.create(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("config");
    }

    @Test
    void passwordsNeverAppearInMessagesOrToString() {
        RelockConfig config = RelockConfig.builder().singleServer("redis://user:s3cret@localhost:6379").build();
        assertThat(config.toString()).doesNotContain("s3cret").contains("***@localhost:6379");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("bogus://user:s3cret@localhost").build())
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    }

    @Test
    void tlsAndADatabaseAreAccepted() {
        RelockConfig config = RelockConfig.builder().singleServer("rediss://localhost:6380/2").build();
        assertThat(config.serverUris()).containsExactly("rediss://localhost:6380/2");
    }

    @Test
    void topologiesKeepTheirUrisAndMasterName() {
        RelockConfig sentinel = RelockConfig.builder().sentinel("mymaster", "redis://s1:26379", "redis://s2:26379")
                .build();
        assertThat(sentinel.topology()).isEqualTo(RelockConfig.Topology.SENTINEL);
        assertThat(sentinel.masterName()).isEqualTo("mymaster");
        assertThat(sentinel.serverUris()).containsExactly("redis://s1:26379", "redis://s2:26379");
        assertThat(RelockConfig.builder().cluster("redis://a:7000").build().topology())
                .isEqualTo(RelockConfig.Topology.CLUSTER);
        assertThat(RelockConfig.builder().masterReplica("redis://a", "redis://b").build().serverUris()).hasSize(2);
    }

    @Test
    void badTopologySettingsAreRejectedNamingTheSetting() {
        assertThatThrownBy(() -> RelockConfig.builder().cluster()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cluster");
        assertThatThrownBy(() -> RelockConfig.builder().sentinel(" ", "redis://s:26379"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masterName");
        assertThatThrownBy(() -> RelockConfig.builder().sentinel("m", "redis://s:26379", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("sentinel");
        assertThatThrownBy(() -> RelockConfig.builder().masterReplica("redis://a", "nonsense").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masterReplica");
        assertThatThrownBy(() -> RelockConfig.builder().cluster("redis://a").singleServer("redis://b"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("CLUSTER");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://a")
                .replicaSync(0, Duration.ofMillis(100)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicaSync");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://a")
                .replicaSync(1, Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicaSync");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://a")
                .trustedCertificates(java.nio.file.Path.of("/no/such/ca.pem")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trustedCertificates");
    }

    @Test
    void credentialsAreNeverShown() {
        RelockConfig config = RelockConfig.builder().sentinel("m", "redis://:sentinel-pw@s:26379")
                .credentials("app", "data-pw".toCharArray()).replicaSync(1, Duration.ofMillis(200)).build();
        assertThat(config.toString()).contains("username=app", "replicaSync=1")
                .doesNotContain("data-pw").doesNotContain("sentinel-pw");
        assertThat(config.password()).containsExactly("data-pw".toCharArray());
    }

    @Test
    void anUnparsableUriWithAPasswordDoesNotQuoteAnyOfIt() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://user:s3/cr3t@127.0.0.1:6379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("singleServer")
                .hasMessageContaining("percent-encode")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("cr3t").doesNotContain("s3"));
    }
}
