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
}
