package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.TlsCertificates;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
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

    // ---- validation at build ------------------------------------------------------------------

    @Test
    void aPortThatIsNotANumberFailsAtBuildNamingTheSettingAndTheUri() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h:notaport").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("singleServer").hasMessageContaining("'redis://h:notaport'")
                .hasMessageContaining("port");
        for (String port : new String[] {"0", "65536", "-1", "", "6379x"}) {
            assertThatThrownBy(() -> RelockConfig.builder().masterReplica("redis://a:6379", "redis://b:" + port).build())
                    .as("port '%s'", port).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("masterReplica")
                    .satisfies(e -> assertThat(e.getMessage()).containsIgnoringCase("port"));
        }
        assertThat(RelockConfig.builder().singleServer("redis://[::1]:6380").build().serverUris())
                .containsExactly("redis://[::1]:6380");
        assertThat(RelockConfig.builder().cluster("rediss://h:65535", "redis://h").build().serverUris()).hasSize(2);
    }

    @Test
    void aBadUriNeverShowsItsPassword() {
        for (String uri : new String[] {"redis://app:s3cret@h:notaport", "redis-sentinel://app:s3cret@h:26379",
                "app:s3cret@h:6379", "redis://app:s3cret@:6379", "ftp://:s3cret@h", "app:s3cret@h://x"}) {
            assertThatThrownBy(() -> RelockConfig.builder().singleServer(uri).build()).as(uri)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("singleServer")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret").contains("***@"));
        }
    }

    @Test
    void onlyRedisAndRedissSchemesWithAHostAreAccepted() {
        assertThatThrownBy(() -> RelockConfig.builder().sentinel("m", "redis-sentinel://s:26379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sentinel")
                .hasMessageContaining("scheme 'redis-sentinel'");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("localhost:6379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no scheme");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://:6379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("singleServer");
        assertThatThrownBy(() -> RelockConfig.builder().cluster("redis://a", "rediss://").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cluster");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("REDIS://h").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scheme 'REDIS'");
    }

    @Test
    void aCommandTimeoutBelowOneMillisecondIsRejected() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h").commandTimeout(Duration.ofNanos(1))
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout")
                .hasMessageContaining(RelockConfig.MIN_COMMAND_TIMEOUT.toString());
        assertThat(RelockConfig.builder().singleServer("redis://h").commandTimeout(RelockConfig.MIN_COMMAND_TIMEOUT)
                .build().commandTimeout()).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void everyDurationSettingRejectsNegativeZeroAndAbsurdValuesNamingTheSetting() {
        Map<String, Function<Duration, RelockConfig.Builder>> settings = Map.of(
                "watchdogTimeout", d -> RelockConfig.builder().watchdogTimeout(d),
                "commandTimeout", d -> RelockConfig.builder().commandTimeout(d),
                "threadWaitTime", d -> RelockConfig.builder().threadWaitTime(d),
                "spinBackoff initial", d -> RelockConfig.builder().spinBackoff(d, Duration.ofDays(1)),
                "spinBackoff max", d -> RelockConfig.builder().spinBackoff(Duration.ofMillis(1), d),
                "replicaSync timeout", d -> RelockConfig.builder().replicaSync(1, d));
        Duration[] bad = {Duration.ofSeconds(-1), Duration.ZERO, Duration.ofNanos(999_999), Duration.ofDays(2),
                Duration.ofSeconds(Long.MAX_VALUE)};
        settings.forEach((setting, builder) -> {
            for (Duration value : bad) {
                assertThatThrownBy(() -> builder.apply(value).singleServer("redis://h").build())
                        .as("%s %s", setting, value).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(setting);
            }
            assertThat(builder.apply(Duration.ofSeconds(1)).singleServer("redis://h").build()).isNotNull();
            assertThat(builder.apply(Duration.ofDays(1)).singleServer("redis://h").build()).isNotNull();
        });
    }

    // ---- credentials --------------------------------------------------------------------------

    @Test
    void credentialsMayBeGivenAsAString() {
        RelockConfig config = RelockConfig.builder().singleServer("redis://h").credentials("app", "data-pw").build();
        assertThat(config.username()).isEqualTo("app");
        assertThat(config.password()).containsExactly("data-pw".toCharArray());
        assertThat(config.toString()).doesNotContain("data-pw");
        assertThatThrownBy(() -> RelockConfig.builder().credentials("app", (String) null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("password");
        assertThatThrownBy(() -> RelockConfig.builder().credentials("", "pw"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("username");
        assertThatThrownBy(() -> RelockConfig.builder().credentials(null, "a").credentials("app", "b".toCharArray()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("credentials");
    }

    // ---- database -----------------------------------------------------------------------------

    @Test
    void theDatabaseComesFromTheSettingOrTheUri() {
        assertThat(RelockConfig.builder().singleServer("redis://h").build().database()).isZero();
        assertThat(RelockConfig.builder().singleServer("redis://h/2").build().database()).isEqualTo(2);
        assertThat(RelockConfig.builder().singleServer("redis://h").database(5).build().database()).isEqualTo(5);
        assertThat(RelockConfig.builder().singleServer("redis://h/5").database(5).build().database()).isEqualTo(5);
        assertThat(RelockConfig.builder().sentinel("m", "redis://s:26379").database(4).build().database()).isEqualTo(4);
        assertThat(RelockConfig.builder().masterReplica("redis://a/1", "redis://b/1").build().database()).isEqualTo(1);
        assertThat(RelockConfig.builder().cluster("redis://a").database(0).build().database()).isZero();
        assertThat(RelockConfig.builder().singleServer("redis://h").database(3).build().toString())
                .contains("database=3");
    }

    @Test
    void badDatabasesAreRejectedAtBuildNamingTheSetting() {
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h").database(-1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database");
        assertThatThrownBy(() -> RelockConfig.builder().cluster("redis://a:7000").database(1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database")
                .hasMessageContaining("cluster");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://app:s3cret@h/2").database(3).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database 3")
                .hasMessageContaining("database 2").hasMessageContaining("'redis://***@h/2'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("redis://h/0").database(3).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database 3");
        assertThatThrownBy(() -> RelockConfig.builder().masterReplica("redis://a/1", "redis://b/2").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masterReplica")
                .hasMessageContaining("different databases");
        assertThatThrownBy(() -> RelockConfig.builder().database(1).database(2))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("database");
    }

    // ---- TLS from JSSE factories --------------------------------------------------------------

    @Test
    void aTrustManagerFactoryAndTrustedCertificatesCannotBothBeGiven() throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init((KeyStore) null);
        RelockConfig config = RelockConfig.builder().singleServer("rediss://h").trustManagerFactory(trust).build();
        assertThat(config.trustManagerFactory()).isSameAs(trust);
        assertThat(config.keyManagerFactory()).isNull();

        assertThatThrownBy(() -> RelockConfig.builder().singleServer("rediss://h").trustManagerFactory(trust)
                .trustedCertificates(TlsCertificates.get().caCertificate()).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("trustedCertificates").hasMessageContaining("trustManagerFactory");
        assertThatThrownBy(() -> RelockConfig.builder().trustManagerFactory(trust).trustManagerFactory(trust))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("trustManagerFactory");
        assertThatThrownBy(() -> RelockConfig.builder().trustManagerFactory(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("trustManagerFactory");
        assertThatThrownBy(() -> RelockConfig.builder().keyManagerFactory(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("keyManagerFactory");
    }

    @Test
    void uninitialisedSslFactoriesAreRejectedAtBuild() throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("rediss://h").trustManagerFactory(trust).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trustManagerFactory")
                .hasMessageContaining("not initialised");
        assertThatThrownBy(() -> RelockConfig.builder().singleServer("rediss://h").keyManagerFactory(keys).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keyManagerFactory")
                .hasMessageContaining("not initialised");
    }

    @Test
    void releaseOnShutdownIsOnByDefaultAndSetOnce() {
        assertThat(RelockConfig.builder().singleServer("redis://h").build().releaseOnShutdown()).isTrue();
        RelockConfig off = RelockConfig.builder().singleServer("redis://h").releaseOnShutdown(false).build();
        assertThat(off.releaseOnShutdown()).isFalse();
        assertThat(off.toString()).contains("releaseOnShutdown=false");
        assertThatThrownBy(() -> RelockConfig.builder().releaseOnShutdown(true).releaseOnShutdown(false))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("releaseOnShutdown");
    }
}
