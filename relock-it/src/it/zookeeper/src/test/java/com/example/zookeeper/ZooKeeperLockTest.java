package com.example.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

// tag::zookeeper-imports[]
import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.Relock;
import io.relock.zookeeper.RelockZooKeeper;
// end::zookeeper-imports[]
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** docs/zookeeper.md's code, compiled from the same text (the tagged regions) and run on a real ZooKeeper server. */
class ZooKeeperLockTest {

    private static TestingServer server;

    /** Whether another client saw order:42 locked while it was charged, and the tokens written. */
    private final List<Boolean> lockedWhileCharging = new ArrayList<>();
    private final List<Long> tokens = new ArrayList<>();
    private Relock otherClient;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        server.close();
    }

    void quickStart(String connectString) {
        // tag::zookeeper-code[]
        try (Relock relock = RelockZooKeeper.builder(connectString)   // "zk1:2181,zk2:2181,zk3:2181"
                .build()) {
            DistributedLock lock = relock.getLock("order:42");
            lock.withLock(() -> chargeOrder(42));                       // one thread in the whole fleet at a time

            FencedLock account = relock.getFencedLock("account:7");
            long token = account.lockAndGetToken();                    // the node's czxid: only grows
            try {
                writeBalance(7, token);                                // the store refuses older tokens
            } finally {
                account.unlock();
            }
        }
        // end::zookeeper-code[]
    }

    private void chargeOrder(int order) {
        lockedWhileCharging.add(otherClient.getLock("order:" + order).isLocked());
    }

    private void writeBalance(int account, long token) {
        tokens.add(token);
    }

    @Test
    void theGuidesCodeLocksAcrossClients() {
        try (Relock other = RelockZooKeeper.builder(server.getConnectString()).build()) {
            otherClient = other;
            quickStart(server.getConnectString());
            quickStart(server.getConnectString());
            assertThat(lockedWhileCharging).containsExactly(true, true);
            assertThat(tokens).hasSize(2);
            assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
            assertThat(other.getLock("order:42").isLocked()).isFalse();
        }
    }
}
