package io.relock.zookeeper;

import io.relock.zookeeper.internal.ZkClient;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;

/**
 * One real ZooKeeper server for a test class (curator-test's {@code TestingServer}), with a
 * Curator client of its own that reads the nodes the clients under test leave.
 */
public final class TestZooKeeper implements AutoCloseable {

    private final TestingServer server;
    private final CuratorFramework inspector;

    private TestZooKeeper(TestingServer server, CuratorFramework inspector) {
        this.server = server;
        this.inspector = inspector;
    }

    /** Starts a server and connects the inspector to it. */
    public static TestZooKeeper start() throws Exception {
        TestingServer server = new TestingServer(true);
        CuratorFramework inspector = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        inspector.start();
        inspector.blockUntilConnected();
        return new TestZooKeeper(server, inspector);
    }

    /** Where the server listens, as a Curator connect string. */
    public String connectString() {
        return server.getConnectString();
    }

    /** The server's port on 127.0.0.1. */
    public int port() {
        return server.getPort();
    }

    /** The client that reads the server's nodes. */
    public CuratorFramework inspector() {
        return inspector;
    }

    /** The nodes of lock {@code name} under {@code root}, holders and waiters: none when it has no node. */
    public List<String> nodes(String root, String name) {
        try {
            return inspector.getChildren().forPath(ZkClient.lockPath(root, name));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("could not read the nodes of '" + name + "'", e);
        }
    }

    @Override
    public void close() throws java.io.IOException {
        inspector.close();
        server.close();
    }
}
