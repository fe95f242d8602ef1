package io.relock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on a loopback port that forwards to a Redis server and injects network faults
 * at a chosen point, deterministically: a client connects to the proxy instead of the server,
 * and the test decides which command's request or reply is lost.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start();
 *         FaultProxy proxy = FaultProxy.to(redis)) {
 *     RedisClient client = RedisClient.create(proxy.uri());          // Lettuce
 *     RedisCommands<String, String> commands = client.connect().sync();
 *     String sha = commands.scriptLoad("return redis.call('INCR', KEYS[1])");
 *
 *     FaultProxy.Fault cut = proxy.cutBeforeReply("EVALSHA");
 *     // The script runs, the connection is cut before its reply; Lettuce reconnects and sends
 *     // EVALSHA again, which now goes through: the script ran twice, and the call returns 2.
 *     Long count = commands.evalsha(sha, ScriptOutputType.INTEGER, "counter");
 *     cut.awaitTriggered(Duration.ofSeconds(5));
 * }
 * }</pre>
 *
 * <p><b>One-shot faults</b> ({@link #cutBeforeRequest}, {@link #cutAfterRequest},
 * {@link #cutBeforeReply}, {@link #delayReplies}) are armed on a marker: a string searched, as
 * UTF-8 bytes, in what each client sends. A RESP command carries its name and arguments as
 * plain bytes, so {@code "EVALSHA"} matches an {@code EVALSHA} command and a key name matches
 * the commands on that key; the match is case-sensitive and also finds the marker inside any
 * other argument. The search sees each connection's bytes as one stream, so a marker split
 * across two TCP reads is found in the read that completes it. Armed faults are checked in the
 * order they were armed; the first whose marker is in a chunk acts on that chunk (at most one
 * per chunk; the others stay armed), on whichever connection sees it first, and only once.
 * Each returns a {@link Fault} to wait for or cancel.
 *
 * <p><b>Standing faults</b> ({@link #delay}, {@link #blackhole()}, {@link #halfOpen()},
 * {@link #refuse()}) last until {@link #heal()}; {@link #cutAll()} closes the connections of
 * the moment. Standing faults combine; one-shot faults only act on chunks that are forwarded
 * (not on those a black hole swallows).
 *
 * <p>Bytes are forwarded as they arrive, one read (up to 16 KiB) at a time, with
 * {@code TCP_NODELAY} on both sides, so pipelining clients work as they do without the proxy.
 * Each connection has two daemon threads named {@code relock-fault-proxy-<port>-...}, one per
 * direction; {@link #close()} ends them and closes every socket. Waiting is bounded: by the
 * requested delays, by the timeouts given to the {@code await} methods, and by
 * {@link #CONNECT_TIMEOUT} when connecting to the server.
 *
 * <p>Thread-safe: faults may be armed, changed and healed from any thread while connections
 * are in use.
 */
public final class FaultProxy implements AutoCloseable {

    /** Loopback address the proxy listens on. */
    public static final String HOST = RedisServer.HOST;

    /**
     * How long a new connection may take to connect to the server; if it cannot connect in
     * time, or at all, the client's connection is closed.
     */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    /** Prefix of the names of the proxy's threads; the proxy's port follows it. */
    static final String THREAD_NAME_PREFIX = "relock-fault-proxy-";

    private static final Logger LOG = LoggerFactory.getLogger(FaultProxy.class);

    /** Bounds how long {@link #close()} waits for the proxy's threads to end. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final int CHUNK_SIZE = 16 * 1024;
    private static final int BACKLOG = 50;

    private final int port;
    private final Object lock = new Object();
    /** One-shot faults not yet fired, in arming order; the pumps iterate it without the lock. */
    private final List<ArmedFault> armed = new CopyOnWriteArrayList<>();
    private final AtomicLong bytesToServer = new AtomicLong();
    private final AtomicLong bytesToClient = new AtomicLong();

    private ServerSocket listener; // null while refusing and once closed; guarded by lock
    private Thread acceptor; // the thread accepting on listener; guarded by lock
    private final Set<Link> links = new HashSet<>(); // open connections; guarded by lock
    private final Set<Thread> threads = new HashSet<>(); // started, not yet seen dead; guarded by lock
    private int accepted; // guarded by lock
    private int lastLinkId; // guarded by lock
    private boolean refusing; // guarded by lock

    // Written under lock (with notifyAll, which wakes delayed pumps); read by the pumps without it.
    private volatile Target target;
    private volatile long latencyNanos;
    private volatile boolean blackholed;
    private volatile boolean halfOpen;
    private volatile boolean closed;
    private volatile int longestMarker;

    private FaultProxy(ServerSocket listener, Target target) {
        this.listener = listener;
        this.port = listener.getLocalPort();
        this.target = target;
    }

    /**
     * Starts a proxy on a free loopback port that forwards to {@code server}.
     *
     * @param server the server to forward to
     * @return the running proxy
     * @throws NullPointerException if {@code server} is null
     * @throws UncheckedIOException if no loopback port can be bound
     */
    public static FaultProxy to(RedisServer server) {
        Objects.requireNonNull(server, "server must not be null");
        return to(server.host(), server.port());
    }

    /**
     * Starts a proxy on a free loopback port that forwards to {@code host:port}. Nothing is
     * checked about the target until a client connects: a connection that cannot reach it is
     * closed.
     *
     * @param host the server's host name or address
     * @param port the server's port
     * @return the running proxy
     * @throws NullPointerException if {@code host} is null
     * @throws IllegalArgumentException if {@code host} is blank or {@code port} is outside 1–65535
     * @throws UncheckedIOException if no loopback port can be bound
     */
    public static FaultProxy to(String host, int port) {
        Target target = Target.of(host, port);
        FaultProxy proxy = new FaultProxy(listen(0), target);
        synchronized (proxy.lock) {
            ServerSocket listener = proxy.listener;
            proxy.acceptor = proxy.startThread("accept", () -> proxy.acceptLoop(listener));
        }
        LOG.debug("started {}", proxy);
        return proxy;
    }

    /** {@return the host the proxy listens on: always {@value #HOST}} */
    public String host() {
        return HOST;
    }

    /** {@return the port the proxy listens on; it stays the same across {@link #refuse()} and {@link #heal()}} */
    public int port() {
        return port;
    }

    /** {@return {@code redis://127.0.0.1:<port>}, the proxy's address for a Redis client} */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /**
     * Makes new connections go to {@code host:port}; connections already open keep their server.
     *
     * @param host the new server's host name or address
     * @param port the new server's port
     * @throws NullPointerException if {@code host} is null
     * @throws IllegalArgumentException if {@code host} is blank or {@code port} is outside 1–65535
     * @throws IllegalStateException if the proxy is closed
     */
    public void retarget(String host, int port) {
        Target next = Target.of(host, port);
        synchronized (lock) {
            requireOpen();
            target = next;
        }
    }

    /**
     * Arms a fault that drops the next client chunk containing {@code marker} and closes that
     * connection on both sides: the server never receives the chunk, so the command in it
     * never runs (with a marker split across reads, the server got only the command's first
     * part, and discards it with the connection). Other commands in the same chunk are
     * dropped as well. The fault {@linkplain Fault#triggered() triggers} once the connection
     * is closed.
     *
     * @param marker the text to look for in what clients send, e.g. a command name or a key
     * @return a handle on the armed fault
     * @throws NullPointerException if {@code marker} is null
     * @throws IllegalArgumentException if {@code marker} is empty
     * @throws IllegalStateException if the proxy is closed
     */
    public Fault cutBeforeRequest(String marker) {
        return arm(Kind.CUT_BEFORE_REQUEST, marker, 0);
    }

    /**
     * Arms a fault that forwards the next client chunk containing {@code marker} to the server,
     * then at once closes that connection on both sides (the server side after a FIN that
     * follows the chunk, so the server reads the whole request). From the moment the marker
     * is seen nothing more reaches the client, so it never sees the reply. The server may
     * still be about to run the command when the client sees the connection close; use
     * {@link #cutBeforeReply(String)} to know it ran. The fault
     * {@linkplain Fault#triggered() triggers} once the connection is closed.
     *
     * @param marker the text to look for in what clients send, e.g. a command name or a key
     * @return a handle on the armed fault
     * @throws NullPointerException if {@code marker} is null
     * @throws IllegalArgumentException if {@code marker} is empty
     * @throws IllegalStateException if the proxy is closed
     */
    public Fault cutAfterRequest(String marker) {
        return arm(Kind.CUT_AFTER_REQUEST, marker, 0);
    }

    /**
     * Arms a fault that forwards the next client chunk containing {@code marker} to the server,
     * and closes that connection on both sides only once the server has certainly run the
     * command: from the moment the marker is seen nothing more reaches the client (the reply
     * and anything after it are read and dropped). This is the lost-reply case: the command
     * ran, the client never learns its result.
     *
     * <p>To be certain rather than to guess from timing, the proxy ends its request stream to
     * the server with a FIN right after the chunk. A Redis server runs every command it has
     * received before it handles that end of stream, replies, and then closes its side; when
     * the proxy sees the server close, it closes the client's side and the fault
     * {@linkplain Fault#triggered() triggers}. (Waiting for the first reply byte instead would
     * be ambiguous with a pipelining client: bytes of an earlier command's reply may arrive
     * after the request was forwarded.) A server that never closes (a
     * {@linkplain RedisServer#pause() paused} one, say) keeps the connection in this state
     * until it does, or until {@link #cutAll()} or {@link #close()}; those also trigger the
     * fault, without the certainty.
     *
     * @param marker the text to look for in what clients send, e.g. {@code "EVALSHA"}
     * @return a handle on the armed fault
     * @throws NullPointerException if {@code marker} is null
     * @throws IllegalArgumentException if {@code marker} is empty
     * @throws IllegalStateException if the proxy is closed
     */
    public Fault cutBeforeReply(String marker) {
        return arm(Kind.CUT_BEFORE_REPLY, marker, 0);
    }

    /**
     * Arms a fault that forwards the next client chunk containing {@code marker} and holds back
     * what the server sends next on that connection — normally the reply — for {@code delay}
     * from the moment the proxy reads it, then delivers it; the connection stays up. Bytes
     * behind it wait their turn, so order is kept. With a pipelining client, a reply to an
     * earlier command still on its way may be the part that is held; the reply to the marked
     * command, behind it, is then late as well. The fault {@linkplain Fault#triggered()
     * triggers} as soon as the chunk is forwarded and the hold is in place.
     *
     * @param marker the text to look for in what clients send, e.g. a command name or a key
     * @param delay how long to hold the reply back; zero holds nothing
     * @return a handle on the armed fault
     * @throws NullPointerException if {@code marker} or {@code delay} is null
     * @throws IllegalArgumentException if {@code marker} is empty or {@code delay} is negative
     * @throws IllegalStateException if the proxy is closed
     */
    public Fault delayReplies(String marker, Duration delay) {
        requireNonNegative(delay, "delay");
        return arm(Kind.DELAY_REPLIES, marker, saturatedNanos(delay));
    }

    /**
     * Delays every chunk in both directions, on every connection, by {@code latency} from the
     * moment the proxy reads it, until {@link #heal()} or another call; order is kept, so a
     * chunk read while an earlier one waits is forwarded after it. A request-reply round trip
     * therefore takes at least twice {@code latency}. Zero turns the delay off; a smaller
     * value also applies to chunks already waiting.
     *
     * @param latency the added one-way latency
     * @throws NullPointerException if {@code latency} is null
     * @throws IllegalArgumentException if {@code latency} is negative
     * @throws IllegalStateException if the proxy is closed
     */
    public void delay(Duration latency) {
        requireNonNegative(latency, "latency");
        synchronized (lock) {
            requireOpen();
            latencyNanos = saturatedNanos(latency);
            lock.notifyAll();
        }
    }

    /**
     * Stops forwarding in both directions until {@link #heal()}: connections stay open, and
     * what either side sends is read and discarded, so writes succeed and reads wait — like a
     * network that silently drops every packet, except that the peers' TCP stacks see their
     * bytes acknowledged. New connections are accepted, connected to the server, and
     * black-holed too. Bytes discarded are lost: after {@code heal()}, forwarding resumes on
     * open connections, but a client waiting for a discarded command's reply waits on.
     *
     * @throws IllegalStateException if the proxy is closed
     */
    public void blackhole() {
        synchronized (lock) {
            requireOpen();
            blackholed = true;
            lock.notifyAll();
        }
    }

    /**
     * Makes every connection half-open until {@link #heal()}: the proxy closes its connection to
     * the server, which sees the client go away, while the client's connection stays open and
     * receives nothing (what the client sends is read and discarded) — like a server host that
     * vanished without a FIN reaching the client. New connections are accepted the same way:
     * open, but never connected to the server. {@code heal()} closes these connections, as the
     * server's host would answer the client's next packet with a reset.
     *
     * @throws IllegalStateException if the proxy is closed
     */
    public void halfOpen() {
        List<Link> current;
        synchronized (lock) {
            requireOpen();
            halfOpen = true;
            current = List.copyOf(links);
        }
        for (Link link : current) {
            link.dropUpstream();
        }
    }

    /**
     * Stops listening until {@link #heal()}, so new connections are refused (the client gets a
     * {@link java.net.ConnectException}), and closes every open connection — like a server
     * whose process died. Returns once the port refuses connections.
     *
     * @throws IllegalStateException if the proxy is closed, or if the thread is interrupted
     *     before the port refuses connections (its interrupt flag is then set again)
     */
    public void refuse() {
        ServerSocket current;
        Thread accepting;
        synchronized (lock) {
            requireOpen();
            refusing = true;
            current = listener;
            accepting = acceptor;
            listener = null;
            acceptor = null;
        }
        closeQuietly(current);
        closeLinks(link -> true);
        // A socket closed while a thread is blocked in accept() keeps listening until that thread
        // has left accept(); only then does the port refuse connections.
        if (accepting != null) {
            try {
                TimeUnit.NANOSECONDS.timedJoin(accepting, CLOSE_TIMEOUT.toNanos());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + this + " to stop listening", e);
            }
            if (accepting.isAlive()) {
                LOG.warn("{} may still accept connections: its acceptor did not end within {}", this, CLOSE_TIMEOUT);
            }
        }
    }

    /**
     * Closes every open connection on both sides, now; new connections work as before.
     *
     * @throws IllegalStateException if the proxy is closed
     */
    public void cutAll() {
        synchronized (lock) {
            requireOpen();
        }
        closeLinks(link -> true);
    }

    /**
     * Ends the standing faults: no more delay, black hole or half-open connections (those are
     * closed), and after {@link #refuse()} the proxy listens again on the same port. Armed
     * one-shot faults stay armed, and a reply already held by {@link #delayReplies} stays held.
     *
     * @throws IllegalStateException if the proxy is closed
     * @throws UncheckedIOException if the port cannot be bound again after {@code refuse()}
     *     (another process took it); the other standing faults are ended all the same
     */
    public void heal() {
        synchronized (lock) {
            requireOpen();
            latencyNanos = 0;
            blackholed = false;
            halfOpen = false;
            lock.notifyAll();
        }
        closeLinks(Link::upstreamDropped);
        synchronized (lock) {
            requireOpen();
            if (refusing) {
                ServerSocket reopened = listen(port);
                listener = reopened;
                refusing = false;
                acceptor = startThread("accept", () -> acceptLoop(reopened));
            }
        }
    }

    /** {@return how many connections the proxy has accepted since it started (refused ones excluded)} */
    public int connectionsAccepted() {
        synchronized (lock) {
            return accepted;
        }
    }

    /** {@return how many accepted connections are still open on the client's side} */
    public int openConnections() {
        synchronized (lock) {
            return links.size();
        }
    }

    /**
     * Waits until the proxy has accepted at least {@code total} connections since it started,
     * for example until a client has reconnected after a cut.
     *
     * @param total the number of connections to wait for, counted since the proxy started
     * @param timeout how long to wait at most
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code total} or {@code timeout} is negative
     * @throws IllegalStateException if fewer connections were accepted within {@code timeout}
     *     (the message says how many), if the proxy is or gets closed, or if the thread is
     *     interrupted (its interrupt flag is then set again)
     */
    public void awaitConnections(int total, Duration timeout) {
        if (total < 0) {
            throw new IllegalArgumentException("total must not be negative: " + total);
        }
        requireNonNegative(timeout, "timeout");
        long timeoutNanos = saturatedNanos(timeout);
        long start = System.nanoTime();
        synchronized (lock) {
            requireOpen();
            while (accepted < total) {
                if (closed) {
                    throw new IllegalStateException(this + " was closed while waiting for " + total
                            + " connections; " + accepted + " were accepted");
                }
                long remaining = timeoutNanos - (System.nanoTime() - start);
                if (remaining <= 0) {
                    throw new IllegalStateException("expected " + total + " connections accepted by " + this
                            + " within " + timeout + ", but " + accepted + " were");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + total + " connections accepted by "
                            + this + "; " + accepted + " were", e);
                }
            }
        }
    }

    /** {@return how many bytes the proxy has forwarded to servers since it started} */
    public long bytesToServer() {
        return bytesToServer.get();
    }

    /** {@return how many bytes the proxy has forwarded to clients since it started} */
    public long bytesToClient() {
        return bytesToClient.get();
    }

    /**
     * Stops listening, closes every connection on both sides, disarms the one-shot faults not
     * yet triggered (waiting on them fails at once), and waits up to 5 seconds for the proxy's
     * threads to end. Does nothing if already closed. Accessors such as {@link #port()} and
     * {@link #bytesToServer()} keep working; the other methods throw
     * {@link IllegalStateException}.
     */
    @Override
    public void close() {
        ServerSocket current;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            current = listener;
            listener = null;
            acceptor = null;
            lock.notifyAll();
        }
        closeQuietly(current);
        closeLinks(link -> true);
        for (ArmedFault fault : armed) {
            fault.abandon();
        }
        awaitThreads();
        LOG.debug("closed {}", this);
    }

    @Override
    public String toString() {
        return "FaultProxy on " + HOST + ":" + port + " to " + target;
    }

    private Fault arm(Kind kind, String marker, long delayNanos) {
        Objects.requireNonNull(marker, "marker must not be null");
        if (marker.isEmpty()) {
            throw new IllegalArgumentException("marker must not be empty");
        }
        ArmedFault fault = new ArmedFault(kind, marker, delayNanos);
        synchronized (lock) {
            requireOpen();
            longestMarker = Math.max(longestMarker, fault.bytes.length);
            armed.add(fault);
        }
        return fault;
    }

    /** Claims the first armed fault whose marker ends in the window's current chunk, or returns null. */
    private ArmedFault claim(MarkerWindow window) {
        for (ArmedFault fault : armed) {
            if (fault.isArmed() && window.containsNew(fault.bytes) && fault.claim()) {
                return fault;
            }
        }
        return null;
    }

    private void acceptLoop(ServerSocket socket) {
        while (true) {
            Socket client;
            try {
                client = socket.accept();
            } catch (IOException e) {
                if (!socket.isClosed()) {
                    // Not refuse() or close(): refuse connections rather than leave them unanswered.
                    LOG.warn("{} cannot accept connections any more; it refuses them until heal()", this, e);
                    synchronized (lock) {
                        if (listener == socket) {
                            listener = null;
                            acceptor = null;
                            refusing = true;
                        }
                    }
                    closeQuietly(socket);
                }
                return;
            }
            register(client);
        }
    }

    private void register(Socket client) {
        synchronized (lock) {
            if (closed || refusing) {
                // Accepted just before refuse() or close() closed the listener.
                closeQuietly(client);
                return;
            }
            accepted++;
            Link link = new Link(++lastLinkId, client, halfOpen);
            links.add(link);
            lock.notifyAll();
            startThread(link.id + "-c2s", link::clientToServer);
        }
    }

    /** Starts a proxy thread and returns it, or returns null if the proxy is closed. Call with lock held. */
    private Thread startThread(String name, Runnable body) {
        if (closed) {
            return null;
        }
        // Threads stay in the set until they have died, so that close() can join every one.
        threads.removeIf(ended -> !ended.isAlive());
        Thread thread = new Thread(body, THREAD_NAME_PREFIX + port + "-" + name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
        return thread;
    }

    private void awaitThreads() {
        List<Thread> remaining;
        synchronized (lock) {
            remaining = new ArrayList<>(threads);
        }
        long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
        for (Thread thread : remaining) {
            long left = deadline - System.nanoTime();
            if (thread == Thread.currentThread() || left <= 0) {
                continue;
            }
            try {
                TimeUnit.NANOSECONDS.timedJoin(thread, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                LOG.warn("interrupted while waiting for the threads of {} to end", this);
                return;
            }
        }
        remaining.removeIf(thread -> !thread.isAlive());
        if (!remaining.isEmpty()) {
            LOG.warn("{} threads of {} did not end within {}: {}", remaining.size(), this, CLOSE_TIMEOUT, remaining);
        }
    }

    private void closeLinks(Predicate<Link> which) {
        List<Link> current;
        synchronized (lock) {
            current = new ArrayList<>(links);
        }
        for (Link link : current) {
            if (which.test(link)) {
                link.close();
            }
        }
    }

    /**
     * Waits until {@code wait} nanoseconds (re-read on every change of the proxy's state) have
     * passed since {@code since}. Returns false if the link or the proxy was closed meanwhile.
     */
    private boolean awaitElapsed(Link link, long since, LongSupplier wait) {
        synchronized (lock) {
            while (true) {
                if (closed || link.isClosed()) {
                    return false;
                }
                long remaining = wait.getAsLong() - (System.nanoTime() - since);
                if (remaining <= 0) {
                    return true;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, remaining);
                } catch (InterruptedException e) {
                    // Nothing interrupts the proxy's threads; if something does, end the connection.
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }

    /** Waits out the standing {@link #delay} for a chunk read at {@code readAt}; false if the link closed. */
    private boolean awaitLatency(Link link, long readAt) {
        return latencyNanos == 0 || awaitElapsed(link, readAt, () -> latencyNanos);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static ServerSocket listen(int port) {
        ServerSocket socket = null;
        try {
            socket = new ServerSocket();
            // Lets heal() bind the port again while connections closed by refuse() linger in TIME_WAIT.
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(HOST, port), BACKLOG);
            return socket;
        } catch (IOException e) {
            closeQuietly(socket);
            throw new UncheckedIOException("cannot listen on " + HOST + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private static void requireNonNegative(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative: " + duration);
        }
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing is best effort: the socket is unusable either way
        }
    }

    /**
     * A handle on one armed one-shot fault, as returned by {@link #cutBeforeRequest},
     * {@link #cutAfterRequest}, {@link #cutBeforeReply} and {@link #delayReplies}. Thread-safe.
     */
    public interface Fault {

        /**
         * Returns whether the fault has triggered: its marker was seen and it did what it says
         * (for the cuts: the connection is closed).
         *
         * @return {@code true} once the fault has triggered
         */
        boolean triggered();

        /**
         * Waits until the fault has triggered; returns at once if it has.
         *
         * @param timeout how long to wait at most
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is negative
         * @throws IllegalStateException naming the fault and its marker if it did not trigger
         *     within {@code timeout}, if it was {@linkplain #cancel() cancelled} or its proxy
         *     closed before it triggered (then at once), or if the thread is interrupted (its
         *     interrupt flag is then set again)
         */
        void awaitTriggered(Duration timeout);

        /**
         * Disarms the fault if its marker has not been seen yet; does nothing otherwise (a fault
         * that is acting, or has acted, is not undone).
         */
        void cancel();
    }

    private enum Kind {
        CUT_BEFORE_REQUEST("cutBeforeRequest"),
        CUT_AFTER_REQUEST("cutAfterRequest"),
        CUT_BEFORE_REPLY("cutBeforeReply"),
        DELAY_REPLIES("delayReplies");

        private final String method;

        Kind(String method) {
            this.method = method;
        }
    }

    /** ARMED → CLAIMED (marker seen) → FIRED; or ARMED → CANCELLED, or ARMED → ABANDONED (proxy closed). */
    private enum FaultState {
        ARMED, CLAIMED, FIRED, CANCELLED, ABANDONED
    }

    private record Target(String host, int port) {

        static Target of(String host, int port) {
            Objects.requireNonNull(host, "host must not be null");
            if (host.isBlank()) {
                throw new IllegalArgumentException("host must not be blank: '" + host + "'");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port must be between 1 and 65535: " + port);
            }
            return new Target(host, port);
        }

        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    private final class ArmedFault implements Fault {

        private final Kind kind;
        private final String marker;
        private final byte[] bytes;
        private final long delayNanos;
        private final AtomicReference<FaultState> state = new AtomicReference<>(FaultState.ARMED);
        /** Counted down when the fault leaves ARMED and CLAIMED for good. */
        private final CountDownLatch settled = new CountDownLatch(1);

        ArmedFault(Kind kind, String marker, long delayNanos) {
            this.kind = kind;
            this.marker = marker;
            this.bytes = marker.getBytes(StandardCharsets.UTF_8);
            this.delayNanos = delayNanos;
        }

        boolean isArmed() {
            return state.get() == FaultState.ARMED;
        }

        /** Takes the fault for one connection; only one caller ever succeeds. */
        boolean claim() {
            if (state.compareAndSet(FaultState.ARMED, FaultState.CLAIMED)) {
                armed.remove(this);
                return true;
            }
            return false;
        }

        /** Marks a claimed fault as done; idempotent. */
        void fire(Link link) {
            if (state.compareAndSet(FaultState.CLAIMED, FaultState.FIRED)) {
                LOG.debug("{} triggered on connection {} of {}", this, link.id, FaultProxy.this);
                settled.countDown();
            }
        }

        /** The proxy closed before the marker was seen. */
        void abandon() {
            if (state.compareAndSet(FaultState.ARMED, FaultState.ABANDONED)) {
                armed.remove(this);
                settled.countDown();
            }
        }

        @Override
        public boolean triggered() {
            return state.get() == FaultState.FIRED;
        }

        @Override
        public void awaitTriggered(Duration timeout) {
            requireNonNegative(timeout, "timeout");
            try {
                settled.await(saturatedNanos(timeout), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + this + " to trigger", e);
            }
            switch (state.get()) {
                case FIRED:
                    return;
                case CANCELLED:
                    throw new IllegalStateException(this + " was cancelled before it triggered");
                case ABANDONED:
                    throw new IllegalStateException(this + " never triggered: " + FaultProxy.this + " was closed first");
                case CLAIMED:
                    throw new IllegalStateException(this + " saw its marker but did not finish within " + timeout
                            + (kind == Kind.CUT_BEFORE_REPLY ? " (the server has not closed the connection yet)" : ""));
                default:
                    throw new IllegalStateException(this + " did not trigger within " + timeout
                            + ": no client sent \"" + marker + "\" through " + FaultProxy.this);
            }
        }

        @Override
        public void cancel() {
            if (state.compareAndSet(FaultState.ARMED, FaultState.CANCELLED)) {
                armed.remove(this);
                settled.countDown();
            }
        }

        @Override
        public String toString() {
            return kind.method + "(\"" + marker + "\")";
        }
    }

    /**
     * One client connection and its connection to the server, with a thread per direction:
     * client-to-server ({@code c2s}, which also connects to the server and starts the other)
     * and server-to-client ({@code s2c}).
     */
    private final class Link {

        private final int id;
        private final Socket client;
        private final AtomicBoolean closed = new AtomicBoolean();
        /** A {@link #delayReplies} hold for the next chunk from the server; -1: none. */
        private final AtomicLong replyHoldNanos = new AtomicLong(-1);
        private final MarkerWindow window = new MarkerWindow(); // only the c2s thread uses it
        private Socket server; // null until the c2s thread creates it; guarded by this
        /** Set by halfOpen(): the server side is gone for good, the client side stays. */
        private volatile boolean upstreamDropped;
        /** Set when a cut starts: nothing more is forwarded to the client. */
        private volatile boolean clientSilenced;
        /** A cutBeforeReply in progress, fired when the connection closes. */
        private volatile ArmedFault replyCut;

        Link(int id, Socket client, boolean upstreamDropped) {
            this.id = id;
            this.client = client;
            this.upstreamDropped = upstreamDropped;
        }

        boolean isClosed() {
            return closed.get();
        }

        boolean upstreamDropped() {
            return upstreamDropped;
        }

        void clientToServer() {
            boolean handedOver = false; // a cutBeforeReply leaves the closing to the s2c thread
            try {
                client.setTcpNoDelay(true);
                Socket upstream = connectUpstream(); // null: half-open, nothing to forward to
                OutputStream toServer = upstream == null ? null : upstream.getOutputStream();
                InputStream fromClient = client.getInputStream();
                byte[] chunk = new byte[CHUNK_SIZE];
                while (true) {
                    int read = fromClient.read(chunk);
                    if (read < 0) {
                        return;
                    }
                    long readAt = System.nanoTime();
                    if (!awaitLatency(this, readAt)) {
                        return;
                    }
                    if (blackholed || upstreamDropped) {
                        window.reset();
                        continue;
                    }
                    window.advance(chunk, read, longestMarker - 1);
                    ArmedFault fault = claim(window);
                    if (fault == null) {
                        forward(toServer, chunk, read);
                    } else if (fault.kind == Kind.DELAY_REPLIES) {
                        try {
                            replyHoldNanos.set(fault.delayNanos);
                            forward(toServer, chunk, read);
                        } finally {
                            fault.fire(this);
                        }
                    } else {
                        handedOver = cut(fault, upstream, toServer, chunk, read);
                        return;
                    }
                }
            } catch (IOException e) {
                // The client or the server went away, or the connection was closed.
            } finally {
                if (!handedOver) {
                    close();
                }
            }
        }

        /** Carries out a cut fault on the chunk that carries its marker; returns whether the s2c thread finishes it. */
        private boolean cut(ArmedFault fault, Socket upstream, OutputStream toServer, byte[] chunk, int length)
                throws IOException {
            LOG.debug("{} matched on connection {} of {}", fault, id, FaultProxy.this);
            clientSilenced = true;
            switch (fault.kind) {
                case CUT_BEFORE_REQUEST:
                    close();
                    fault.fire(this);
                    return false;
                case CUT_AFTER_REQUEST:
                    try {
                        forward(toServer, chunk, length);
                        upstream.shutdownOutput();
                    } finally {
                        close();
                        fault.fire(this);
                    }
                    return false;
                case CUT_BEFORE_REPLY:
                    replyCut = fault;
                    if (closed.get()) {
                        // Closed meanwhile (cutAll, close): close() may have missed the fault.
                        fault.fire(this);
                        return false;
                    }
                    forward(toServer, chunk, length);
                    // The server runs what it received, replies, sees the end of input and closes.
                    upstream.shutdownOutput();
                    return true;
                default:
                    throw new IllegalStateException("not a cut: " + fault);
            }
        }

        void serverToClient(Socket upstream) {
            try {
                InputStream fromServer = upstream.getInputStream();
                OutputStream toClient = client.getOutputStream();
                byte[] chunk = new byte[CHUNK_SIZE];
                while (true) {
                    int read = fromServer.read(chunk);
                    if (read < 0) {
                        return;
                    }
                    long readAt = System.nanoTime();
                    if (clientSilenced) {
                        continue;
                    }
                    if (!awaitLatency(this, readAt)) {
                        return;
                    }
                    long hold = replyHoldNanos.getAndSet(-1);
                    if (hold > 0 && !awaitElapsed(this, readAt, () -> hold)) {
                        return;
                    }
                    if (clientSilenced || blackholed) {
                        continue;
                    }
                    toClient.write(chunk, 0, read);
                    bytesToClient.addAndGet(read);
                }
            } catch (IOException e) {
                // The server or the client went away, or the connection was closed.
            } finally {
                // After halfOpen() the client side stays open, unless a cut is under way.
                if (!upstreamDropped || replyCut != null) {
                    close();
                }
            }
        }

        /**
         * Connects to the current target and starts the s2c thread; returns the server socket,
         * or null if the connection is (or becomes) half-open.
         *
         * @throws IOException if the server cannot be reached, or the connection was closed
         */
        private Socket connectUpstream() throws IOException {
            Socket socket = new Socket();
            synchronized (this) {
                if (upstreamDropped || closed.get()) {
                    socket.close();
                    if (upstreamDropped) {
                        return null;
                    }
                    throw new SocketException("connection " + id + " was closed");
                }
                server = socket;
            }
            Target to = target;
            try {
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(to.host(), to.port()), (int) CONNECT_TIMEOUT.toMillis());
            } catch (IOException e) {
                if (upstreamDropped) {
                    return null;
                }
                LOG.debug("connection {} of {} cannot reach {}: {}", id, FaultProxy.this, to, e.toString());
                throw e;
            }
            boolean started;
            synchronized (lock) {
                started = startThread(id + "-s2c", () -> serverToClient(socket)) != null;
            }
            if (!started) {
                throw new SocketException(FaultProxy.this + " is closed");
            }
            return socket;
        }

        private void forward(OutputStream toServer, byte[] chunk, int length) throws IOException {
            try {
                toServer.write(chunk, 0, length);
            } catch (IOException e) {
                if (upstreamDropped) {
                    return; // halfOpen() closed the server side under this write: the bytes are discarded
                }
                throw e;
            }
            bytesToServer.addAndGet(length);
        }

        /** Closes the server side only (halfOpen); the client side stays open. */
        void dropUpstream() {
            Socket socket;
            synchronized (this) {
                upstreamDropped = true;
                socket = server;
            }
            closeQuietly(socket);
        }

        /** Closes both sides; idempotent. Fires a cutBeforeReply in progress. */
        void close() {
            if (closed.compareAndSet(false, true)) {
                Socket socket;
                synchronized (this) {
                    socket = server;
                }
                closeQuietly(client);
                closeQuietly(socket);
                synchronized (lock) {
                    links.remove(this);
                    lock.notifyAll();
                }
            }
            ArmedFault pending = replyCut;
            if (pending != null) {
                pending.fire(this);
            }
        }
    }
}
