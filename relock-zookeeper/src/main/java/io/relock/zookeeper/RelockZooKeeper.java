package io.relock.zookeeper;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.internal.Clients;
import io.relock.internal.support.Args;
import io.relock.zookeeper.internal.ZkClient;
import java.time.Duration;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryUntilElapsed;

/**
 * Relock on ZooKeeper 3.9, through Curator 5.9: the same {@link Relock} as on Redis and the
 * databases: reentrant, fair, fenced, spin, simple and read-write locks, {@code holdAtLeast},
 * leader election, listeners and observers.
 *
 * <pre>{@code
 * Relock relock = RelockZooKeeper.builder("zk1:2181,zk2:2181,zk3:2181").build();
 * DistributedLock lock = relock.getLock("order:42");
 * }</pre>
 *
 * <p>Each hold and each waiter is one protected ephemeral sequential node under
 * {@code <root>/<name>} (root {@code /relock/locks} by default). The node with the lowest
 * sequence holds; every waiter watches only the node just before it, so a release wakes one
 * waiter and locks are fair across clients. The fencing token of a hold is its node's
 * {@code czxid}, which only grows.
 *
 * <p>The session is the lease: nothing is renewed. When the connection is suspended (no answer
 * from ZooKeeper for two thirds of the session timeout) every hold of the client ends and its
 * owners hear of it through the loss signal ({@code LockListener.onLockLost}), before ZooKeeper can expire the session and let another client in. After
 * a reconnect the nodes of those holds are deleted if they are still there.
 *
 * <p>Not read here: the settings of {@link RelockConfig} that name Redis (servers, key prefix,
 * replica sync).
 */
public final class RelockZooKeeper {

    /** Where the locks' nodes are unless {@link Builder#root} says otherwise. */
    public static final String DEFAULT_ROOT = "/relock/locks";
    /** The session timeout asked for unless {@link Builder#sessionTimeout} says otherwise. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);

    /** The server of the default config of a ZooKeeper client: never connected to. */
    public static final String PLACEHOLDER_SERVER = "redis://relock-zookeeper.invalid:6379";

    private static final Pattern ROOT = Pattern.compile("(/[A-Za-z0-9_.:-]+)+");

    private RelockZooKeeper() {}

    /**
     * Starts building a client that connects to {@code connectString} with a Curator client of
     * its own, which it closes when it closes.
     *
     * @param connectString ZooKeeper's servers, {@code host:port,host:port}, optionally with a chroot
     * @return a builder with the defaults
     * @throws NullPointerException if {@code connectString} is null
     * @throws IllegalArgumentException if it is blank
     */
    public static Builder builder(String connectString) {
        Args.notNull(connectString, "connectString");
        Args.require(!connectString.isBlank(), "connectString must not be blank");
        return new Builder(connectString, null);
    }

    /**
     * Starts building a client on {@code curator}, a Curator client the application owns: it
     * must be started, and stays open when Relock closes (Relock then deletes its own nodes).
     *
     * @param curator a started Curator client
     * @return a builder with the defaults
     * @throws NullPointerException if {@code curator} is null
     * @throws IllegalArgumentException if it is not started
     */
    public static Builder builder(CuratorFramework curator) {
        Args.notNull(curator, "curator");
        Args.require(curator.getState() == CuratorFrameworkState.STARTED,
                "curator must be started (its state is %s)", curator.getState());
        return new Builder(null, curator);
    }

    /** Settings of a ZooKeeper client; {@link #build()} starts it. */
    public static final class Builder {

        private final String connectString;
        private final CuratorFramework curator;
        private String root = DEFAULT_ROOT;
        private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
        private RelockConfig config;
        private int operationThreads = 8;

        private Builder(String connectString, CuratorFramework curator) {
            this.connectString = connectString;
            this.curator = curator;
        }

        /**
         * The path under which the locks' nodes are, e.g. {@code /myapp/locks}: clients that
         * should exclude each other use the same.
         *
         * @param root an absolute path of plain elements (letters, digits, {@code _.:-})
         * @return this builder
         * @throws IllegalArgumentException if it is not one
         */
        public Builder root(String root) {
            Args.notNull(root, "root");
            Args.require(ROOT.matcher(root).matches() && !root.contains("/./") && !root.contains("/../")
                    && !root.endsWith("/.") && !root.endsWith("/.."),
                    "root must be an absolute ZooKeeper path of plain elements, like /myapp/locks: '%s'", root);
            this.root = root;
            return this;
        }

        /**
         * The session timeout asked of ZooKeeper (which bounds it to 2 to 20 of its ticks: 4 to
         * 40 s with the default tick of 2 s). It is the lease: a client that dies or is cut off
         * keeps its locks this long at most. Default 10 s. Only for a client of Relock's own Curator.
         *
         * @param sessionTimeout how long
         * @return this builder
         * @throws IllegalArgumentException if shorter than one second, or the builder is on an application's Curator
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            Args.notNull(sessionTimeout, "sessionTimeout");
            Args.require(curator == null, "sessionTimeout is the application's Curator client's own setting here");
            Args.require(sessionTimeout.compareTo(Duration.ofSeconds(1)) >= 0,
                    "sessionTimeout must be at least one second: %s", sessionTimeout);
            this.sessionTimeout = sessionTimeout;
            return this;
        }

        /**
         * The settings shared with the Redis client: {@code commandTimeout} (how long one call
         * retries a lost connection, and how long {@link #build()} waits to connect),
         * {@code watchdogTimeout} (a third of it is how often the holds' nodes are checked, to
         * find force-unlocked ones), {@code spinBackoff}, observers and
         * {@code releaseOnShutdown}; its servers are not used.
         *
         * @param config the settings
         * @return this builder
         * @throws NullPointerException if {@code config} is null
         */
        public Builder config(RelockConfig config) {
            this.config = Args.notNull(config, "config");
            return this;
        }

        /**
         * How many ZooKeeper calls the client runs at once for callers that do not wait in them
         * (async calls, waiters woken by a release). Default 8.
         *
         * @param operationThreads how many
         * @return this builder
         * @throws IllegalArgumentException if not between 1 and 256
         */
        public Builder operationThreads(int operationThreads) {
            Args.require(operationThreads >= 1 && operationThreads <= 256,
                    "operationThreads must be between 1 and 256: %s", operationThreads);
            this.operationThreads = operationThreads;
            return this;
        }

        /**
         * Connects and starts the client.
         *
         * @return the client; close it when done
         * @throws io.relock.RelockConnectionException if ZooKeeper cannot be reached within the
         *     command timeout
         */
        public Relock build() {
            RelockConfig settings = config == null
                    ? RelockConfig.builder().singleServer(PLACEHOLDER_SERVER).build() : config;
            CuratorFramework client = curator;
            if (client == null) {
                int commandMillis = (int) Math.min(Integer.MAX_VALUE, settings.commandTimeout().toMillis());
                client = CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .sessionTimeoutMs((int) sessionTimeout.toMillis())
                        .connectionTimeoutMs(Math.max(1000, (int) Math.min(commandMillis, sessionTimeout.toMillis())))
                        .retryPolicy(new RetryUntilElapsed(commandMillis, 50))
                        .build();
                client.start();
            }
            return Clients.relock(ZkClient.start(new ZkClient.Settings(client, curator == null, root, settings,
                    operationThreads)));
        }
    }
}
