package io.relock.zookeeper.internal;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.relock.RelockConnectionException;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.lease.Hold;
import io.relock.internal.lease.Watchdog;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locks as ZooKeeper nodes. Under {@code <root>/<encoded name>} every hold and every waiter
 * is one protected ephemeral sequential node, {@code _c_<uuid>-<mode>-<sequence>}, whose data
 * is the owner field. The node with the lowest sequence holds a lock ({@code lock} and
 * {@code write} nodes); a {@code read} node holds once no write node of another owner precedes
 * it. A waiter keeps its node, so waiters are served in the order they came, across clients,
 * and watches only the node it waits behind: a release wakes one waiter, not all.
 *
 * <p>This client remembers each owner's node and hold count (a re-entry touches nothing on the
 * server); the token of a hold is its node's {@code czxid}, which only grows. The session is
 * the lease: an acquire with a fixed lease deletes its node when the lease ends, and a
 * suspended or lost connection ends every hold of the client at once (the session may expire
 * before it is back); after a reconnect their nodes are deleted if they are still there.
 */
final class ZkLocks {

    private static final Logger LOG = LoggerFactory.getLogger(ZkLocks.class);

    /** Node modes: a plain lock, and the halves of a read-write lock (a plain lock counts as a writer). */
    static final String LOCK = "lock";
    static final String READ = "read";
    static final String WRITE = "write";

    /** A check's answers, as the watchdog reads them. */
    private static final long GONE = 0;
    private static final long HELD = 1;
    private static final long FORCED = 2;

    private static final int SEQUENCE_DIGITS = 10;
    private static final String PROTECTED_PREFIX = "_c_";
    /** {@code _c_} + a UUID + {@code -}: what Curator puts before a protected node's name. */
    private static final int PROTECTED_LENGTH = 3 + 36 + 1;

    /** One owner's node on one lock: its hold count, or what it waits behind. */
    static final class Node {
        final String path;
        final String mode;
        final long czxid;
        final long session;
        volatile int holds;
        /** The node this waiter watches; null while it holds, or before its first check. */
        volatile String blocker;
        /** Whether to look at the children again: the watched node changed, or the connection did. */
        volatile boolean moved = true;
        /**
         * Whether the node this waiter watched was the only one in its way and has been deleted:
         * it holds now, with nothing to read (a node that comes later has a higher sequence).
         */
        volatile boolean clear;
        /** The timer of the hold's lease, null when it holds nothing; a superseded one finds itself replaced. */
        volatile Timeout lease;

        Node(String path, String mode, long czxid, long session) {
            this.path = path;
            this.mode = mode;
            this.czxid = czxid;
            this.session = session;
        }

        String name() {
            return ZKPaths.getNodeFromPath(path);
        }

        /** Ends the lease's timer: cancelled, not left to fire for nothing a watchdog timeout later. */
        void endLease() {
            Timeout timer = lease;
            lease = null;
            if (timer != null) {
                timer.cancel();
            }
        }
    }

    /** A child of a lock's node, as its name tells. */
    record Child(String name, String mode, int sequence) {}

    private record Key(String lock, String field) {}

    private final CuratorFramework curator;
    private final String root;
    private final ZkGateway gateway;
    private final UnlockChannels channels;
    private final Timer timer;
    private final Supplier<Watchdog> watchdog;
    private final Consumer<Runnable> afterLossesTold;
    /** How often a wait for a background call's answer looks whether the Curator client was closed. */
    private final long checkClosedMillis;
    private final Map<Key, Node> nodes = new ConcurrentHashMap<>();
    /** Nodes of holds this client gave up while the connection was in doubt: deleted once it is back. */
    private final Set<String> orphans = ConcurrentHashMap.newKeySet();

    /**
     * @param afterLossesTold runs an action once the holders' loss listeners have been called
     *     (or waited for long enough)
     * @param commandTimeoutMillis how long one call may take; a wait for a background answer looks this often
     *     whether Curator was closed
     */
    ZkLocks(CuratorFramework curator, String root, ZkGateway gateway, UnlockChannels channels, Timer timer,
            Supplier<Watchdog> watchdog, Consumer<Runnable> afterLossesTold, long commandTimeoutMillis) {
        this.curator = curator;
        this.root = root;
        this.gateway = gateway;
        this.channels = channels;
        this.timer = timer;
        this.watchdog = watchdog;
        this.afterLossesTold = afterLossesTold;
        this.checkClosedMillis = Math.max(10, commandTimeoutMillis);
    }

    /** The path of lock {@code name}'s node. */
    String dir(String name) {
        return root + "/" + encode(name);
    }

    /**
     * A lock name as one path element: letters, digits and {@code -_:,=@+~} stay, every other
     * UTF-8 byte becomes {@code %XX} (a dot too, so that no name becomes {@code .} or {@code ..}).
     */
    static String encode(String name) {
        StringBuilder out = new StringBuilder(name.length() + 8);
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "-_:,=@+~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /** The children that are Relock's nodes, in queue order. */
    List<Child> children(String name) throws Exception {
        try {
            return parseChildren(curator.getChildren().forPath(dir(name)));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private static List<Child> parseChildren(List<String> names) {
        List<Child> children = new ArrayList<>(names.size());
        for (String child : names) {
            Child parsed = parse(child);
            if (parsed != null) {
                children.add(parsed);
            }
        }
        children.sort(Comparator.comparingInt(Child::sequence));
        return children;
    }

    private static Child parse(String child) {
        if (!child.startsWith(PROTECTED_PREFIX) || child.length() < PROTECTED_LENGTH + SEQUENCE_DIGITS + 2) {
            return null;
        }
        String rest = child.substring(PROTECTED_LENGTH);
        int dash = rest.length() - SEQUENCE_DIGITS - 1;
        if (rest.charAt(dash) != '-') {
            return null;
        }
        try {
            return new Child(child, rest.substring(0, dash), Integer.parseInt(rest.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The child that {@code own} waits behind, or null if it holds: for a lock or write node its
     * predecessor, for a read node the last write or lock node before it other than
     * {@code ownWriter} (the owner's own write hold: a writer may also read).
     */
    static Child blocker(List<Child> children, int own, String mode, String ownWriter) {
        if (own == 0) {
            return null;
        }
        if (!READ.equals(mode)) {
            return children.get(own - 1);
        }
        for (int i = own - 1; i >= 0; i--) {
            Child child = children.get(i);
            if (!READ.equals(child.mode()) && !child.name().equals(ownWriter)) {
                return child;
            }
        }
        return null;
    }

    /**
     * Whether {@code blocker} is the only node in the way of a waiter's node in {@code mode}:
     * once it is deleted, the waiter holds. For a lock or write node, the blocker is then the
     * first node; for a read node, no write or lock node but the owner's own comes before it.
     */
    static boolean onlyBlocker(List<Child> children, Child blocker, String mode, String ownWriter) {
        if (!READ.equals(mode)) {
            return children.get(0).equals(blocker);
        }
        for (Child child : children) {
            if (child.equals(blocker)) {
                return true;
            }
            if (!READ.equals(child.mode()) && !child.name().equals(ownWriter)) {
                return false;
            }
        }
        return false;
    }

    /** The holders among {@code children}: the first node, or the read nodes before the first other one. */
    static List<Child> holders(List<Child> children) {
        if (children.isEmpty()) {
            return List.of();
        }
        if (!READ.equals(children.get(0).mode())) {
            return List.of(children.get(0));
        }
        List<Child> readers = new ArrayList<>();
        for (Child child : children) {
            if (!READ.equals(child.mode())) {
                break;
            }
            readers.add(child);
        }
        return readers;
    }

    long sessionId() {
        try {
            return curator.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * The answer of an acquire attempt that needs nothing from ZooKeeper, or null when it does:
     * a re-entry counts here; a waiter whose only blocker was deleted holds; a waiter whose
     * blocker has not changed since the last attempt is still busy.
     */
    Attempt acquireLocally(String name, String field, int holdsBefore, boolean reentrant, long leaseMillis) {
        Node node = nodes.get(new Key(name, field));
        if (node == null) {
            return null;
        }
        if (node.holds > 0) {
            if (!reentrant && holdsBefore > 0) {
                throw new IllegalMonitorStateException("lock '" + name + "' is not reentrant and is already held by "
                        + field);
            }
            // holdsBefore, not holds + 1: an attempt repeated after a lost answer takes no second hold.
            node.holds = holdsBefore + 1;
            leaseFrom(name, field, node, leaseMillis);
            return Attempt.acquired(node.czxid);
        }
        if (node.clear) {
            // Only a deletion of this session's own node could make it wrong, and the
            // watchdog's check of the node finds that as it would for any hold.
            return granted(name, field, node, holdsBefore, leaseMillis);
        }
        if (!node.moved && node.blocker != null) {
            return Attempt.busy(-1);
        }
        return null;
    }

    /**
     * One acquire attempt of {@code field} in {@code mode}: what {@link #acquireLocally} answers,
     * else the owner's node is created (once: a waiter keeps it) with the children read in the
     * same round trip, or the children are read again.
     */
    Attempt acquire(String name, String field, String mode, int holdsBefore, boolean reentrant, long leaseMillis)
            throws Exception {
        Attempt local = acquireLocally(name, field, holdsBefore, reentrant, leaseMillis);
        if (local != null) {
            return local;
        }
        Key key = new Key(name, field);
        Node node = nodes.get(key);
        for (int created = 0;;) {
            List<Child> children = null;
            if (node == null) {
                if (++created > 3) {
                    throw new RelockConnectionException("the node of lock '" + name + "' vanished three times in a "
                            + "row after it was created: the session keeps ending", null);
                }
                Created made = createAndList(name, mode, field);
                node = made.node();
                nodes.put(key, node);
                children = made.children();
            }
            node.moved = false;
            if (children == null) {
                children = children(name);
            }
            int own = indexOf(children, node.name());
            if (own < 0) {
                // Gone: its session ended, or someone deleted it (a force-unlock of a waiter's node).
                nodes.remove(key, node);
                node = null;
                continue;
            }
            Node writer = READ.equals(mode) ? nodes.get(new Key(name, field + ":" + WRITE)) : null;
            String ownWriter = writer != null && writer.holds > 0 ? writer.name() : null;
            Child blocker = blocker(children, own, mode, ownWriter);
            if (blocker == null) {
                return granted(name, field, node, holdsBefore, leaseMillis);
            }
            boolean only = onlyBlocker(children, blocker, mode, ownWriter);
            String blockerPath = ZKPaths.makePath(dir(name), blocker.name());
            node.blocker = blockerPath;
            Node waiting = node;
            Stat stat = curator.checkExists().usingWatcher((org.apache.curator.framework.api.CuratorWatcher) event -> {
                // Any event (deleted, or the connection's state): look again at the next attempt;
                // the deletion of the only blocker needs no look.
                if (only && event.getType() == Watcher.Event.EventType.NodeDeleted) {
                    waiting.clear = true;
                }
                waiting.moved = true;
                channels.onMessage(name, UnlockChannels.READ_UNLOCK_MESSAGE);
            }).forPath(blockerPath);
            if (stat != null) {
                return Attempt.busy(-1);
            }
            if (only) {
                return granted(name, field, node, holdsBefore, leaseMillis);
            }
            node.moved = true;
        }
    }

    private Attempt granted(String name, String field, Node node, int holdsBefore, long leaseMillis) {
        node.blocker = null;
        node.clear = false;
        node.holds = holdsBefore + 1;
        leaseFrom(name, field, node, leaseMillis);
        return Attempt.acquired(node.czxid);
    }

    /** A node just created, and the lock's children when they were read with it (else null). */
    private record Created(Node node, List<Child> children) {}

    /**
     * Creates the owner's node and reads the lock's children in one round trip: the listing is
     * sent right behind the create on the same session, and ZooKeeper answers a session's
     * requests in order, so it has the new node, unless Curator had to send the create again (a
     * lost connection, the lock's parent not there yet). Then the children are left to read again.
     */
    private Created createAndList(String name, String mode, String field) throws Exception {
        String dir = dir(name);
        CompletableFuture<CuratorEvent> created = new CompletableFuture<>();
        CompletableFuture<List<String>> listed = new CompletableFuture<>();
        curator.create().creatingParentContainersIfNeeded().withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .inBackground((client, event) -> created.complete(event))
                .forPath(ZKPaths.makePath(dir, mode + "-"), field.getBytes(StandardCharsets.UTF_8));
        curator.getChildren().inBackground((client, event) -> listed.complete(
                event.getResultCode() == KeeperException.Code.OK.intValue() ? event.getChildren() : null))
                .forPath(dir);
        CuratorEvent event = await(created);
        if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
            throw KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath());
        }
        Node node = new Node(event.getName(), mode, event.getStat().getCzxid(), event.getStat().getEphemeralOwner());
        List<String> names = await(listed);
        if (names == null || !names.contains(node.name())) {
            return new Created(node, null);
        }
        return new Created(node, parseChildren(names));
    }

    /**
     * Waits for a background call's answer as a blocking call waits for its own: as long as the
     * Curator client is open, since Curator always answers, with the result or the failure its
     * retry policy ends with (a slow server is waited for, not given up on: a create given up on
     * could still be made). An interrupt does not cut the wait short; its flag is kept.
     *
     * @throws IllegalStateException if the Curator client is closed before the answer came
     */
    private <T> T await(CompletableFuture<T> answer) throws Exception {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return answer.get(checkClosedMillis, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (java.util.concurrent.TimeoutException e) {
                    if (curator.getState() == CuratorFrameworkState.STOPPED) {
                        throw new IllegalStateException("the Curator client was closed before ZooKeeper answered");
                    }
                } catch (java.util.concurrent.ExecutionException e) {
                    throw e.getCause() instanceof Exception cause ? cause : e;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static int indexOf(List<Child> children, String name) {
        for (int i = 0; i < children.size(); i++) {
            if (children.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A fixed lease ends the hold when it runs out; a watchdog's hold lives as long as the
     * session. Both get a timer: the lease of a watchdog's hold is the watchdog timeout, which a
     * fixed lease may equal, so the timer asks the watchdog which it was when it fires.
     */
    private void leaseFrom(String name, String field, Node node, long leaseMillis) {
        Timeout previous = node.lease;
        node.lease = timer.newTimeout(timeout -> {
            if (node.lease != timeout || nodes.get(new Key(name, field)) != node) {
                return;
            }
            Hold hold = watchdog.get().get(name, field);
            if (hold != null && hold.watchdog) {
                return;
            }
            if (nodes.remove(new Key(name, field), node)) {
                node.holds = 0;
                deleteInBackground(node.path);
            }
        }, leaseMillis, TimeUnit.MILLISECONDS);
        if (previous != null) {
            previous.cancel();
        }
    }

    /**
     * Releases one hold: null if {@code field} holds nothing here, 0 if it still holds, 1 once its
     * node is deleted. If ZooKeeper cannot be reached, the hold ends here all the same and
     * Curator deletes the node once the connection is back ({@code guaranteed()}), or it ends
     * with the session.
     */
    Long release(String name, String field, int holdsBefore) throws Exception {
        Key key = new Key(name, field);
        Node node = nodes.get(key);
        if (node == null || node.holds == 0) {
            return null;
        }
        if (holdsBefore > 1) {
            node.holds = holdsBefore - 1;
            return 0L;
        }
        if (!nodes.remove(key, node)) {
            return null;
        }
        node.holds = 0;
        node.endLease();
        delete(node.path);
        return 1L;
    }

    /** Undoes an acquire that may have taken effect: back to {@code countBefore} holds. */
    long rollback(String name, String field, int countBefore) throws Exception {
        Key key = new Key(name, field);
        Node node = nodes.get(key);
        if (node == null) {
            return 0;
        }
        if (countBefore > 0 && node.holds > 0) {
            node.holds = countBefore;
            return 1;
        }
        if (nodes.remove(key, node)) {
            node.holds = 0;
            node.endLease();
            delete(node.path);
        }
        return 1;
    }

    /** A waiter that stops waiting leaves the queue: its node goes. */
    void abandon(String name, String field) throws Exception {
        Key key = new Key(name, field);
        Node node = nodes.get(key);
        if (node != null && node.holds == 0 && nodes.remove(key, node)) {
            delete(node.path);
        }
    }

    int holdCount(String name, String field) {
        Node node = nodes.get(new Key(name, field));
        return node == null ? 0 : node.holds;
    }

    /** The last hold stays for {@code keepMillis} more: its node goes when that ends. */
    long keep(String name, String field, long keepMillis) {
        Key key = new Key(name, field);
        Node node = nodes.get(key);
        if (node == null || node.holds == 0 || !nodes.remove(key, node)) {
            return 0;
        }
        node.holds = 0;
        node.endLease();
        timer.newTimeout(timeout -> deleteInBackground(node.path), Math.max(1, keepMillis), TimeUnit.MILLISECONDS);
        return 1;
    }

    /** Deletes the holders' nodes of {@code name}, whoever they are: 1 if there were any, else 0. */
    long forceRelease(String name) throws Exception {
        List<Child> holders = holders(children(name));
        for (Child holder : holders) {
            delete(ZKPaths.makePath(dir(name), holder.name()));
        }
        return holders.isEmpty() ? 0 : 1;
    }

    /** Whether the lock is held: in {@code mode} for a read-write half, by anyone for a plain lock. */
    boolean isLocked(String name, String mode) throws Exception {
        List<Child> holders = holders(children(name));
        if (holders.isEmpty()) {
            return false;
        }
        return LOCK.equals(mode) || holders.get(0).mode().equals(READ) == READ.equals(mode);
    }

    /** The holder's token (its node's czxid), or null when the lock is free. */
    Long token(String name) throws Exception {
        for (Child holder : holders(children(name))) {
            Stat stat = curator.checkExists().forPath(ZKPaths.makePath(dir(name), holder.name()));
            if (stat != null) {
                return stat.getCzxid();
            }
        }
        return null;
    }

    /** A snapshot: the holders' owner fields and hold counts (1 for other clients' holds), and the waiters. */
    record Snapshot(Map<String, Long> holders, int waiters, boolean readWrite) {}

    Snapshot snapshot(String name) throws Exception {
        List<Child> children = children(name);
        List<Child> holders = holders(children);
        Map<String, Long> owners = new java.util.LinkedHashMap<>();
        boolean readWrite = false;
        for (Child holder : holders) {
            readWrite |= !LOCK.equals(holder.mode());
            String owner;
            try {
                owner = new String(curator.getData().forPath(ZKPaths.makePath(dir(name), holder.name())),
                        StandardCharsets.UTF_8);
            } catch (KeeperException.NoNodeException e) {
                continue;
            }
            Node own = nodes.get(new Key(name, owner));
            owners.merge(owner, own != null && own.holds > 0 ? (long) own.holds : 1L, Long::sum);
        }
        return new Snapshot(owners, children.size() - holders.size(), readWrite);
    }

    private void delete(String path) throws Exception {
        try {
            curator.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            // Gone already: its session ended, or a force-unlock took it.
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException e) {
            LOG.warn("could not delete ZooKeeper node {} ({}); it is deleted once ZooKeeper answers again, or goes "
                    + "with the session", path, e.toString());
        }
    }

    private void deleteInBackground(String path) {
        try {
            curator.delete().guaranteed().inBackground((client, event) -> {
                if (event.getType() == CuratorEventType.DELETE && event.getResultCode() != 0
                        && event.getResultCode() != KeeperException.Code.NONODE.intValue()) {
                    LOG.debug("deleting ZooKeeper node {} failed ({}); it goes with the session", path,
                            KeeperException.Code.get(event.getResultCode()));
                }
            }).forPath(path);
        } catch (Exception e) {
            LOG.debug("could not delete ZooKeeper node {} ({}); it goes with the session", path, e.toString());
        }
    }

    /**
     * The watchdog's tick: whether each hold's node is still there, of this session. Nothing is
     * renewed (the session is the lease); this finds holds a force-unlock removed. One exists
     * call per hold, sent together.
     */
    CompletableFuture<List<Object>> check(String[] keys, String[] args) {
        long session = sessionId();
        List<CompletableFuture<Object>> answers = new ArrayList<>(keys.length);
        for (int i = 0; i < keys.length; i++) {
            Node node = nodes.get(new Key(keys[i], args[i + 1]));
            if (node == null || node.holds == 0 || node.session != session) {
                answers.add(CompletableFuture.completedFuture(GONE));
                continue;
            }
            CompletableFuture<Object> answer = new CompletableFuture<>();
            answers.add(answer);
            try {
                curator.checkExists().inBackground((client, event) -> {
                    int code = event.getResultCode();
                    if (code == KeeperException.Code.OK.intValue()) {
                        answer.complete(event.getStat().getEphemeralOwner() == session ? HELD : GONE);
                    } else if (code == KeeperException.Code.NONODE.intValue()) {
                        answer.complete(FORCED);
                    } else {
                        answer.completeExceptionally(gateway.translate("check the node " + node.path,
                                KeeperException.create(KeeperException.Code.get(code))));
                    }
                }).forPath(node.path);
            } catch (Exception e) {
                answer.completeExceptionally(gateway.translate("check the node " + node.path, e));
            }
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                .thenApply(ignored -> answers.stream().map(CompletableFuture::join).toList());
    }

    /**
     * The connection's state: a suspended or lost connection ends every hold (the session may
     * expire before it is back, and with it the nodes); a reconnect deletes what they left, once
     * their holders' listeners have been told, and has every waiter look again.
     */
    void stateChanged(ConnectionState state) {
        switch (state) {
            case SUSPENDED, LOST -> connectionInDoubt(state == ConnectionState.LOST);
            case RECONNECTED -> reconnected();
            default -> {
                // CONNECTED (the first time) and READ_ONLY change nothing held.
            }
        }
    }

    private void connectionInDoubt(boolean lost) {
        gateway.connectionChanged();
        RelockConnectionException cause = new RelockConnectionException(lost
                ? "the ZooKeeper session was lost: its nodes, and the holds they were, are gone"
                : "the connection to ZooKeeper was suspended: the session may expire, and the holds with it, before "
                        + "it is back, so they end now", null);
        nodes.forEach((key, node) -> {
            if (node.holds > 0 || lost) {
                if (nodes.remove(key, node)) {
                    node.holds = 0;
                    orphans.add(node.path);
                }
            } else {
                node.clear = false;
                node.moved = true;
            }
        });
        Watchdog holds = watchdog.get();
        for (Hold hold : holds.holds()) {
            holds.lost(hold, cause);
        }
        LOG.warn("ZooKeeper connection {}: every hold of this client ended", lost ? "lost" : "suspended");
    }

    private void reconnected() {
        gateway.connectionChanged();
        long session = sessionId();
        List<String> ended = new ArrayList<>();
        for (String path : orphans) {
            orphans.remove(path);
            ended.add(path);
        }
        // The ended holds' nodes keep every other client out until their holders have heard of the loss.
        afterLossesTold.accept(() -> ended.forEach(this::deleteInBackground));
        nodes.forEach((key, node) -> {
            if (node.session != session) {
                nodes.remove(key, node);
            } else {
                node.moved = true;
            }
        });
        channels.onConnected();
    }

    /** At close, on a Curator client that stays open: every node of this client goes now, not with the session. */
    void deleteAll() {
        nodes.forEach((key, node) -> {
            if (nodes.remove(key, node)) {
                node.holds = 0;
                orphans.add(node.path);
            }
        });
        for (String path : orphans) {
            orphans.remove(path);
            try {
                curator.delete().guaranteed().forPath(path);
            } catch (KeeperException.NoNodeException e) {
                // Gone with its session, or force-unlocked.
            } catch (Exception e) {
                LOG.debug("could not delete ZooKeeper node {} at close ({}); Curator deletes it once ZooKeeper answers",
                        path, e.toString());
            }
        }
    }

    /** How many nodes this client keeps (holds and waiters), for tests and metrics. */
    int size() {
        return nodes.size();
    }
}
