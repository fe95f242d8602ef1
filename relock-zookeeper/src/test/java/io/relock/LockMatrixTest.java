package io.relock;

import io.relock.testkit.Eventually;
import io.relock.zookeeper.RelockZooKeeper;
import io.relock.zookeeper.TestZooKeeper;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The contract matrix on ZooKeeper: core's contract suite ({@link LockContractTest}), test for
 * test, for every lock type, on one real ZooKeeper server ({@code TestingServer}). Each test
 * gets a root path of its own. What the Redis suite reads off Redis it reads here off the nodes:
 * a client waits for a lock when a node stands behind the holder's, and no waiter is left when
 * the holders' nodes are the only ones.
 */
class LockMatrixTest {

    private static TestZooKeeper zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @Nested
    class Reentrant extends OnZooKeeper {
        Reentrant() {
            super(LockType.REENTRANT);
        }
    }

    @Nested
    class Fair extends OnZooKeeper {
        Fair() {
            super(LockType.FAIR);
        }
    }

    @Nested
    class Fenced extends OnZooKeeper {
        Fenced() {
            super(LockType.FENCED);
        }
    }

    @Nested
    class Spin extends OnZooKeeper {
        Spin() {
            super(LockType.SPIN);
        }
    }

    @Nested
    class Simple extends OnZooKeeper {
        Simple() {
            super(LockType.SIMPLE);
        }
    }

    @Nested
    class Read extends OnZooKeeper {
        Read() {
            super(LockType.READ);
        }
    }

    @Nested
    class Write extends OnZooKeeper {
        Write() {
            super(LockType.WRITE);
        }
    }

    /** The suite on one lock type, under a root of its own. */
    abstract static class OnZooKeeper extends LockTypeContractTest {

        private static final AtomicInteger ROOTS = new AtomicInteger();
        private final String root = "/matrix/" + ROOTS.incrementAndGet() + "-" + UUID.randomUUID();

        OnZooKeeper(LockType type) {
            super(type);
        }

        @Override
        protected Clients clients(Backend backend) {
            return new Clients(watchdog -> RelockZooKeeper.builder(zookeeper.connectString()).root(root)
                    .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER)
                            .watchdogTimeout(watchdog).commandTimeout(Clients.COMMAND_TIMEOUT).build())
                    .build());
        }

        private List<String> nodes(String name) {
            return zookeeper.nodes(root, name);
        }

        /** The nodes behind the holders': a holder's node is first, or a reader's before any writer's. */
        private long waiting(String name) {
            List<String> nodes = nodes(name).stream()
                    .sorted((a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10))).toList();
            int holders = 0;
            while (holders < nodes.size() && (holders == 0 || nodes.get(holders).contains("-read-")
                    && nodes.get(0).contains("-read-"))) {
                holders++;
            }
            return nodes.size() - holders;
        }

        @Override
        protected void awaitWaiting(String name) {
            Eventually.await(PROMPTLY, "a node waiting for '" + name + "'", () -> waiting(name) > 0);
        }

        @Override
        protected long waitersLeft(String name) {
            return waiting(name);
        }

        /** Locks with a node: held, or waited for. */
        @Override
        protected long storedLocks() {
            try {
                if (zookeeper.inspector().checkExists().forPath(root) == null) {
                    return 0;
                }
                return zookeeper.inspector().getChildren().forPath(root).stream()
                        .filter(child -> {
                            try {
                                return !zookeeper.inspector().getChildren().forPath(root + "/" + child).isEmpty();
                            } catch (KeeperException.NoNodeException e) {
                                return false;
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        }).count();
            } catch (Exception e) {
                throw new IllegalStateException("could not count the locks under " + root, e);
            }
        }
    }
}
