package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.spring.RelockLeadership;
import io.relock.spring.RelockTemplate;
import io.relock.testkit.Eventually;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code relock.store=zookeeper}: the starter's client on a real ZooKeeper server the test
 * starts, on Relock's own Curator client ({@code relock.zookeeper.connect-string}) or on the
 * application's {@code CuratorFramework} bean; the {@code relock.*} settings apply, no Redis is
 * needed, and a setting the client refuses fails the start naming the property.
 */
class ZooKeeperStoreTest {

    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RelockAutoConfiguration.class,
                        RelockHealthContributorAutoConfiguration.class))
                .withPropertyValues("relock.store=zookeeper", "relock.watchdog-timeout=7s");
    }

    private static CuratorFramework curator() {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100));
        curator.start();
        return curator;
    }

    @Test
    void onItsOwnCuratorTheClientKeepsItsLocksUnderTheRootAndDeletesThemWhenTheContextCloses() throws Exception {
        try (CuratorFramework observer = curator()) {
            runner().withPropertyValues("relock.zookeeper.connect-string=" + zookeeper.getConnectString(),
                    "relock.zookeeper.root=/app/locks", "relock.zookeeper.session-timeout=5s").run(context -> {
                        assertThat(context).hasNotFailed();
                        Relock relock = context.getBean(Relock.class);
                        assertThat(relock.config().watchdogTimeout()).isEqualTo(Duration.ofSeconds(7));
                        assertThat(context.getBean(RelockTemplate.class)).isNotNull();
                        DistributedLock lock = relock.getLock("order:42");
                        lock.lock();
                        try {
                            assertThat(relock.getLockInfo("order:42").isLocked()).isTrue();
                            assertThat(observer.getChildren().forPath("/app/locks/order:42")).singleElement()
                                    .asString().contains("-lock-");
                        } finally {
                            lock.unlock();
                        }
                        lock.lock();
                        Health health = context.getBean(RelockHealthIndicator.class).health(true);
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails()).containsEntry("heldLocks", 1);
                    });
            // The context closed the client with a hold: its node went with it.
            assertThat(observer.getChildren().forPath("/app/locks/order:42")).isEmpty();
        }
    }

    @Test
    void withoutAConnectStringTheClientRunsOnTheApplicationsCuratorAndLeavesItOpen() throws Exception {
        CuratorFramework application = curator();
        try (application) {
            // No destroy method: the context would close an AutoCloseable bean itself, and the check is that Relock does not.
            runner().withBean(CuratorFramework.class, () -> application, bean -> bean.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Relock relock = context.getBean(Relock.class);
                        DistributedLock lock = relock.getLock("job:nightly");
                        lock.lock();
                        assertThat(application.getChildren().forPath("/relock/locks/job:nightly")).hasSize(1);
                    });
            assertThat(application.getState()).isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(application.getChildren().forPath("/relock/locks/job:nightly")).isEmpty();
        }
    }

    @Test
    void leaderElectionRunsOnZooKeeper() {
        runner().withPropertyValues("relock.zookeeper.connect-string=" + zookeeper.getConnectString(),
                "relock.leader-election.names=nightly-report").run(context -> {
                    assertThat(context).hasNotFailed();
                    RelockLeadership leadership = context.getBean(RelockLeadership.class);
                    Eventually.await(Duration.ofSeconds(10), "elected", () -> leadership.isLeader("nightly-report"));
                    assertThat(leadership.leadership("nightly-report")).hasValueSatisfying(
                            term -> assertThat(term.term()).isPositive());
                });
    }

    @Test
    void withNeitherAConnectStringNorACuratorBeanTheStartFailsNamingTheProperty() {
        runner().run(context -> assertThat(context).hasFailed().getFailure()
                .hasStackTraceContaining("relock.zookeeper.connect-string")
                .hasStackTraceContaining("define one CuratorFramework bean"));
    }

    @Test
    void aSessionTimeoutForTheApplicationsCuratorFailsTheStart() throws Exception {
        try (CuratorFramework application = curator()) {
            runner().withBean(CuratorFramework.class, () -> application)
                    .withPropertyValues("relock.zookeeper.session-timeout=5s")
                    .run(context -> assertThat(context).hasFailed().getFailure()
                            .hasStackTraceContaining("relock.zookeeper.session-timeout")
                            .hasStackTraceContaining("has its own session timeout"));
        }
    }

    @Test
    void settingsTheClientRefusesFailTheStartNamingTheProperty() {
        String ensemble = "relock.zookeeper.connect-string=" + zookeeper.getConnectString();
        for (List<String> setting : List.of(List.of("relock.zookeeper.root=locks", "relock.zookeeper.root"),
                List.of("relock.zookeeper.root=/a/../b", "relock.zookeeper.root"),
                List.of("relock.zookeeper.session-timeout=100ms", "relock.zookeeper.session-timeout"),
                List.of("relock.zookeeper.operation-threads=0", "relock.zookeeper.operation-threads"),
                List.of("relock.zookeeper.connect-string= ", "relock.zookeeper.connect-string"))) {
            runner().withPropertyValues(ensemble, setting.get(0)).run(context -> assertThat(context).as(setting.get(0))
                    .hasFailed().getFailure().hasStackTraceContaining("Property " + setting.get(1) + " with value"));
        }
    }

    @Test
    void aStoreWhoseModuleIsMissingFailsTheStartNamingTheDependency() {
        runner().withClassLoader(new FilteredClassLoader("io.relock.zookeeper"))
                .withPropertyValues("relock.zookeeper.connect-string=" + zookeeper.getConnectString())
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("relock.store")
                        .hasStackTraceContaining("add the dependency io.relock:relock-zookeeper"));
        runner().withClassLoader(new FilteredClassLoader("io.relock.jdbc"))
                .withPropertyValues("relock.store=jdbc")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("add the dependency io.relock:relock-jdbc"));
    }
}
