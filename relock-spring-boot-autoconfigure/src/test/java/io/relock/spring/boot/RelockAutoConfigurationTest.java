package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.ClusterTopology;
import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import io.relock.testkit.TlsCertificates;
import io.relock.spring.EnableRelock;
import io.relock.spring.RelockConfiguration;
import io.relock.spring.RelockLeadership;
import io.relock.spring.RelockTemplate;

/**
 * The {@link Relock} bean from Spring Boot's Redis settings, for every way Boot can describe a
 * server, against real redis-server processes.
 */
class RelockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RelockAutoConfiguration.class));

    /** Takes and releases a lock through the context's client, and checks Redis saw the key. */
    private static void locksOn(Relock relock, RedisServer expectedMaster, String key) {
        DistributedLock lock = relock.getLock("probe");
        lock.lock();
        try {
            assertThat(expectedMaster.command("EXISTS", key)).isEqualTo(1L);
        } finally {
            lock.unlock();
        }
        assertThat(expectedMaster.command("EXISTS", key)).isEqualTo(0L);
    }

    @Test
    void aUrlWithADatabaseAndTheRelockPropertiesMakeTheClient() {
        try (RedisServer server = RedisServer.start()) {
            runner.withPropertyValues("spring.data.redis.url=" + server.uri() + "/3", "spring.data.redis.timeout=750ms",
                    "relock.key-prefix=app:", "relock.watchdog-timeout=3s").run(context -> {
                        Relock relock = context.getBean(Relock.class);
                        assertThat(relock.toString()).contains("watchdogTimeout=PT3S", "commandTimeout=PT0.75S",
                                "keyPrefix='app:'");
                        assertThat(relock.config().releaseOnShutdown())
                                .as("the context, not a JVM shutdown hook of the client's own, releases at a stop")
                                .isFalse();
                        DistributedLock lock = relock.getLock("probe");
                        lock.lock();
                        try {
                            assertThat(server.command("SELECT", "3")).isEqualTo("OK");
                            assertThat(dbSize(server, 3)).as("the lock and the client's registry entry").isEqualTo(2L);
                            assertThat(dbSize(server, 0)).isZero();
                        } finally {
                            lock.unlock();
                        }
                        assertThat(context).hasSingleBean(RelockTemplate.class);
                    });
        }
    }

    private static long dbSize(RedisServer server, int db) {
        String keyspace = server.info("keyspace");
        for (String line : keyspace.split("\r?\n")) {
            if (line.startsWith("db" + db + ":")) {
                return Long.parseLong(line.replaceAll("db\\d+:keys=(\\d+).*", "$1"));
            }
        }
        return 0;
    }

    @Test
    void hostPortAndAnAclUserFromTheProperties() {
        try (RedisServer server = RedisServer.start()) {
            server.command("ACL", "SETUSER", "app", "on", ">s3cret:/@", "~*", "&*", "+@all");
            runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.port(),
                    "spring.data.redis.username=app", "spring.data.redis.password=s3cret:/@").run(context -> {
                        Relock relock = context.getBean(Relock.class);
                        assertThat(relock.toString()).contains("username=app").doesNotContain("s3cret");
                        locksOn(relock, server, "probe");
                    });
            runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.port(),
                    "spring.data.redis.username=app", "spring.data.redis.password=wrong").run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).hasStackTraceContaining("WRONGPASS")
                                .satisfies(e -> assertThat(e.toString()).doesNotContain("wrong@"));
                    });
        }
    }

    @Test
    void sentinelNodesAndMasterName() {
        try (SentinelTopology sentinels = SentinelTopology.builder().replicas(1).start()) {
            runner.withPropertyValues("spring.data.redis.sentinel.master=" + sentinels.masterName(),
                    "spring.data.redis.sentinel.nodes=" + String.join(",", sentinels.sentinelUris().stream()
                            .map(uri -> uri.replace("redis://", "")).toList())).run(context -> {
                                Relock relock = context.getBean(Relock.class);
                                assertThat(relock.toString()).contains("SENTINEL");
                                locksOn(relock, sentinels.master(), "probe");
                            });
        }
    }

    @Test
    void clusterNodes() {
        try (ClusterTopology cluster = ClusterTopology.start()) {
            runner.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",",
                    cluster.uris().stream().map(uri -> uri.replace("redis://", "")).toList())).run(context -> {
                        Relock relock = context.getBean(Relock.class);
                        assertThat(relock.toString()).contains("CLUSTER");
                        locksOn(relock, cluster.masterFor("probe"), "probe");
                    });
        }
    }

    @Test
    void aTlsServerThroughAnSslBundle() {
        RedisBinary binary = RedisBinary.locate();
        assumeTrue(binary.supportsTls(), "the redis-server binary has no TLS: " + binary.path());
        TlsCertificates certificates = TlsCertificates.get();
        try (RedisServer server = RedisServer.builder().tls().start()) {
            ApplicationContextRunner tls = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                    SslAutoConfiguration.class, DataRedisAutoConfiguration.class, RelockAutoConfiguration.class));
            tls.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.tlsPort(),
                    "spring.data.redis.ssl.enabled=true", "spring.data.redis.ssl.bundle=redis",
                    "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + certificates.caCertificate())
                    .run(context -> locksOn(context.getBean(Relock.class), server, "probe"));
            tls.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.tlsPort(),
                    "spring.data.redis.ssl.enabled=true", "spring.data.redis.timeout=2s")
                    .run(context -> assertThat(context).hasFailed());
        }
    }

    @Test
    void aConnectionDetailsBeanAsAServiceConnectionMakesIt() {
        try (RedisServer server = RedisServer.start()) {
            runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1")
                    .withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
                        @Override
                        public Standalone getStandalone() {
                            return Standalone.of(server.host(), server.port());
                        }
                    })
                    .run(context -> locksOn(context.getBean(Relock.class), server, "probe"));
        }
    }

    @Test
    void masterReplicaNodes() {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.builder().replicaOf(master).start()) {
            runner.withPropertyValues("spring.data.redis.masterreplica.nodes=127.0.0.1:" + replica.port()
                    + ",127.0.0.1:" + master.port()).run(context -> {
                        Relock relock = context.getBean(Relock.class);
                        assertThat(relock.toString()).contains("MASTER_REPLICA");
                        locksOn(relock, master, "probe");
                    });
        }
    }

    @Test
    void anApplicationsOwnClientWins() {
        try (RedisServer server = RedisServer.start()) {
            runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1")
                    .withBean(Relock.class, () -> Relock.create(RelockConfig.builder().singleServer(server.uri()).build()))
                    .run(context -> {
                        assertThat(context).hasSingleBean(Relock.class);
                        locksOn(context.getBean(Relock.class), server, "probe");
                        assertThat(context).hasSingleBean(RelockTemplate.class);
                    });
        }
    }

    @Test
    void anApplicationsOwnEnableRelockIsUsedOnceAndTakesTheProperties() {
        try (RedisServer server = RedisServer.start()) {
            runner.withPropertyValues("spring.data.redis.url=" + server.uri(), "relock.default-wait-time=250ms")
                    .withUserConfiguration(OwnEnableRelock.class)
                    .run(context -> {
                        assertThat(context).hasSingleBean(RelockConfiguration.class).hasSingleBean(RelockTemplate.class)
                                .hasSingleBean(RelockLeadership.class);
                        assertThat(context.getBean(RelockTemplate.class).defaultWaitTime())
                                .isEqualTo(Duration.ofMillis(250));
                    });
        }
    }

    @Test
    void customizersAdjustWhatHasNoProperty() {
        try (RedisServer server = RedisServer.start()) {
            runner.withPropertyValues("spring.data.redis.url=" + server.uri())
                    .withUserConfiguration(Customized.class)
                    .run(context -> assertThat(context.getBean(Relock.class).toString()).contains("keyPrefix='custom:'"));
        }
    }

    @Test
    void aBadPropertyFailsTheStartNamingIt() {
        for (List<String> bad : List.of(List.of("relock.watchdog-timeout=1ms", "relock.watchdog-timeout"),
                List.of("relock.command-timeout=0s", "relock.command-timeout"),
                List.of("relock.thread-wait-time=1ms", "relock.thread-wait-time"),
                List.of("relock.spin-backoff.initial=2s", "relock.spin-backoff.initial"),
                List.of("relock.replica-sync.min-replicas=-1", "relock.replica-sync.min-replicas"),
                List.of("relock.watchdog-timeout=soon", "relock.watchdog-timeout"))) {
            runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1", bad.get(0)).run(context -> {
                assertThat(context).as(bad.get(0)).hasFailed();
                assertThat(context.getStartupFailure()).as(bad.get(0)).hasStackTraceContaining(bad.get(1));
            });
        }
    }

    @Test
    void theClientClosesWithTheContext() {
        try (RedisServer server = RedisServer.start()) {
            Relock[] client = new Relock[1];
            runner.withPropertyValues("spring.data.redis.url=" + server.uri())
                    .run(context -> client[0] = context.getBean(Relock.class));
            assertThatThrownBy(() -> client[0].getLock("after")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }

    @Test
    void offWhenDisabled() {
        runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1", "relock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(Relock.class).doesNotHaveBean(RelockTemplate.class));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableRelock
    static class OwnEnableRelock {}

    @Configuration(proxyBeanMethods = false)
    static class Customized {
        @Bean
        RelockConfigCustomizer prefix() {
            return builder -> builder.keyPrefix("custom:");
        }
    }
}
