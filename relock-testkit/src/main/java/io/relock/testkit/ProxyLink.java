package io.relock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client connection of a {@link FaultProxy} and its connection to the server, with a thread
 * per direction that pumps the bytes and applies the faults: client-to-server ({@code c2s},
 * which also connects to the server, starts the other, and acts on armed one-shot faults) and
 * server-to-client ({@code s2c}).
 */
final class ProxyLink {

    private static final int CHUNK_SIZE = 16 * 1024;

    final int id;
    private final ProxyCore proxy;
    private final Socket client;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** A {@link FaultProxy#delayReplies} hold for the next chunk from the server; -1: none. */
    private final AtomicLong replyHoldNanos = new AtomicLong(-1);
    private final MarkerWindow window = new MarkerWindow(); // only the c2s thread uses it
    private Socket server; // null until the c2s thread creates it; guarded by this
    /** Set by halfOpen(): the server side is gone for good, the client side stays. */
    private volatile boolean upstreamDropped;
    /** Set when a cut starts: nothing more is forwarded to the client. */
    private volatile boolean clientSilenced;
    /** A cutBeforeReply in progress, fired when the connection closes. */
    private volatile ArmedFault replyCut;

    ProxyLink(ProxyCore proxy, int id, Socket client, boolean upstreamDropped) {
        this.proxy = proxy;
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
                if (!proxy.awaitLatency(this, readAt)) {
                    return;
                }
                if (proxy.blackholed() || upstreamDropped) {
                    window.reset();
                    continue;
                }
                window.advance(chunk, read, proxy.longestMarker() - 1);
                ArmedFault fault = proxy.claim(window);
                if (fault == null) {
                    forward(toServer, chunk, read);
                } else if (fault.kind == ArmedFault.Kind.DELAY_REPLIES) {
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
        ProxyCore.LOG.debug("{} matched on connection {} of {}", fault, id, proxy);
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

    private void serverToClient(Socket upstream) {
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
                if (!proxy.awaitLatency(this, readAt)) {
                    return;
                }
                long hold = replyHoldNanos.getAndSet(-1);
                if (hold > 0 && !proxy.awaitElapsed(this, readAt, () -> hold)) {
                    return;
                }
                if (clientSilenced || proxy.blackholed()) {
                    continue;
                }
                toClient.write(chunk, 0, read);
                proxy.bytesToClient.addAndGet(read);
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
        ProxyTarget to = proxy.target();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(to.host(), to.port()), (int) FaultProxy.CONNECT_TIMEOUT.toMillis());
        } catch (IOException e) {
            if (upstreamDropped) {
                return null;
            }
            ProxyCore.LOG.debug("connection {} of {} cannot reach {}: {}", id, proxy, to, e.toString());
            throw e;
        }
        if (!proxy.startThreadIfOpen(id + "-s2c", () -> serverToClient(socket))) {
            throw new SocketException(proxy + " is closed");
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
        proxy.bytesToServer.addAndGet(length);
    }

    /** Closes the server side only (halfOpen); the client side stays open. */
    void dropUpstream() {
        Socket socket;
        synchronized (this) {
            upstreamDropped = true;
            socket = server;
        }
        ProxyCore.closeQuietly(socket);
    }

    /** Closes both sides; idempotent. Fires a cutBeforeReply in progress. */
    void close() {
        if (closed.compareAndSet(false, true)) {
            Socket socket;
            synchronized (this) {
                socket = server;
            }
            ProxyCore.closeQuietly(client);
            ProxyCore.closeQuietly(socket);
            proxy.unregister(this);
        }
        ArmedFault pending = replyCut;
        if (pending != null) {
            pending.fire(this);
        }
    }
}
