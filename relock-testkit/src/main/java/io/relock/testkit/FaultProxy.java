package io.relock.testkit;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;

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

    private final ProxyCore core;

    private FaultProxy(ProxyCore core) {
        this.core = core;
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
        FaultProxy proxy = new FaultProxy(ProxyCore.start(ProxyTarget.of(host, port)));
        ProxyCore.LOG.debug("started {}", proxy);
        return proxy;
    }

    /** {@return the host the proxy listens on: always {@value #HOST}} */
    public String host() {
        return HOST;
    }

    /** {@return the port the proxy listens on; it stays the same across {@link #refuse()} and {@link #heal()}} */
    public int port() {
        return core.port();
    }

    /** {@return {@code redis://127.0.0.1:<port>}, the proxy's address for a Redis client} */
    public String uri() {
        return "redis://" + HOST + ":" + core.port();
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
        core.retarget(ProxyTarget.of(host, port));
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
        return core.arm(ArmedFault.Kind.CUT_BEFORE_REQUEST, marker, 0);
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
        return core.arm(ArmedFault.Kind.CUT_AFTER_REQUEST, marker, 0);
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
        return core.arm(ArmedFault.Kind.CUT_BEFORE_REPLY, marker, 0);
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
        Settings.requireNonNegative(delay, "delay");
        return core.arm(ArmedFault.Kind.DELAY_REPLIES, marker, ProxyCore.saturatedNanos(delay));
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
        Settings.requireNonNegative(latency, "latency");
        core.delay(ProxyCore.saturatedNanos(latency));
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
        core.blackhole();
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
        core.halfOpen();
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
        core.refuse();
    }

    /**
     * Closes every open connection on both sides, now; new connections work as before.
     *
     * @throws IllegalStateException if the proxy is closed
     */
    public void cutAll() {
        core.cutAll();
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
        core.heal();
    }

    /** {@return how many connections the proxy has accepted since it started (refused ones excluded)} */
    public int connectionsAccepted() {
        return core.accepted();
    }

    /** {@return how many accepted connections are still open on the client's side} */
    public int openConnections() {
        return core.openConnections();
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
        Settings.requireNonNegative(timeout, "timeout");
        core.awaitConnections(total, timeout);
    }

    /** {@return how many bytes the proxy has forwarded to servers since it started} */
    public long bytesToServer() {
        return core.bytesToServer.get();
    }

    /** {@return how many bytes the proxy has forwarded to clients since it started} */
    public long bytesToClient() {
        return core.bytesToClient.get();
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
        core.close();
    }

    @Override
    public String toString() {
        return core.toString();
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
}
