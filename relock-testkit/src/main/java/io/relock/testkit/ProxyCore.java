package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state a {@link FaultProxy} shares with its threads, and what changes it: the listener and
 * its accept loop, the open connections and the threads that serve them, the standing faults,
 * and the armed one-shot faults. {@code FaultProxy} is its public face and checks the
 * arguments; the contracts are in its Javadoc.
 */
final class ProxyCore {

    static final Logger LOG = LoggerFactory.getLogger(FaultProxy.class);

    /** Bounds how long {@link #close()} waits for the proxy's threads to end. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final int BACKLOG = 50;

    /** One-shot faults not yet fired, in arming order; the pumps iterate it without the lock. */
    final List<ArmedFault> armed = new CopyOnWriteArrayList<>();
    final AtomicLong bytesToServer = new AtomicLong();
    final AtomicLong bytesToClient = new AtomicLong();

    private final int port;
    private final Object lock = new Object();
    private ServerSocket listener; // null while refusing and once closed; guarded by lock
    private Thread acceptor; // the thread accepting on listener; guarded by lock
    private final Set<ProxyLink> links = new HashSet<>(); // open connections; guarded by lock
    private final Set<Thread> threads = new HashSet<>(); // started, not yet seen dead; guarded by lock
    private int accepted; // guarded by lock
    private int lastLinkId; // guarded by lock
    private boolean refusing; // guarded by lock

    // Written under lock (with notifyAll, which wakes delayed pumps); read by the pumps without it.
    private volatile ProxyTarget target;
    private volatile long latencyNanos;
    private volatile boolean blackholed;
    private volatile boolean halfOpen;
    private volatile boolean closed;
    private volatile int longestMarker;

    private ProxyCore(ServerSocket listener, ProxyTarget target) {
        this.listener = listener;
        this.port = listener.getLocalPort();
        this.target = target;
    }

    /** Listens on a free loopback port and starts accepting connections for {@code target}. */
    static ProxyCore start(ProxyTarget target) {
        ProxyCore proxy = new ProxyCore(listen(0), target);
        synchronized (proxy.lock) {
            ServerSocket listener = proxy.listener;
            proxy.acceptor = proxy.startThread("accept", () -> proxy.acceptLoop(listener));
        }
        return proxy;
    }

    int port() {
        return port;
    }

    ProxyTarget target() {
        return target;
    }

    boolean blackholed() {
        return blackholed;
    }

    int longestMarker() {
        return longestMarker;
    }

    void retarget(ProxyTarget next) {
        synchronized (lock) {
            requireOpen();
            target = next;
        }
    }

    void delay(long nanos) {
        synchronized (lock) {
            requireOpen();
            latencyNanos = nanos;
            lock.notifyAll();
        }
    }

    void blackhole() {
        synchronized (lock) {
            requireOpen();
            blackholed = true;
            lock.notifyAll();
        }
    }

    void halfOpen() {
        List<ProxyLink> current;
        synchronized (lock) {
            requireOpen();
            halfOpen = true;
            current = List.copyOf(links);
        }
        for (ProxyLink link : current) {
            link.dropUpstream();
        }
    }

    void refuse() {
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

    void cutAll() {
        synchronized (lock) {
            requireOpen();
        }
        closeLinks(link -> true);
    }

    void heal() {
        synchronized (lock) {
            requireOpen();
            latencyNanos = 0;
            blackholed = false;
            halfOpen = false;
            lock.notifyAll();
        }
        closeLinks(ProxyLink::upstreamDropped);
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

    int accepted() {
        synchronized (lock) {
            return accepted;
        }
    }

    int openConnections() {
        synchronized (lock) {
            return links.size();
        }
    }

    void awaitConnections(int total, Duration timeout) {
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

    void close() {
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
        return "FaultProxy on " + FaultProxy.HOST + ":" + port + " to " + target;
    }

    ArmedFault arm(ArmedFault.Kind kind, String marker, long delayNanos) {
        Objects.requireNonNull(marker, "marker must not be null");
        if (marker.isEmpty()) {
            throw new IllegalArgumentException("marker must not be empty");
        }
        ArmedFault fault = new ArmedFault(this, kind, marker, delayNanos);
        synchronized (lock) {
            requireOpen();
            longestMarker = Math.max(longestMarker, fault.bytes.length);
            armed.add(fault);
        }
        return fault;
    }

    /** Claims the first armed fault whose marker ends in the window's current chunk, or returns null. */
    ArmedFault claim(MarkerWindow window) {
        for (ArmedFault fault : armed) {
            if (fault.isArmed() && window.containsNew(fault.bytes) && fault.claim()) {
                return fault;
            }
        }
        return null;
    }

    /** Starts a connection's thread unless the proxy is closed; returns whether it started. */
    boolean startThreadIfOpen(String name, Runnable body) {
        synchronized (lock) {
            return startThread(name, body) != null;
        }
    }

    /** Forgets a connection that has closed. */
    void unregister(ProxyLink link) {
        synchronized (lock) {
            links.remove(link);
            lock.notifyAll();
        }
    }

    /**
     * Waits until {@code wait} nanoseconds (re-read on every change of the proxy's state) have
     * passed since {@code since}. Returns false if the link or the proxy was closed meanwhile.
     */
    boolean awaitElapsed(ProxyLink link, long since, LongSupplier wait) {
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

    /** Waits out the standing {@link FaultProxy#delay} for a chunk read at {@code readAt}; false if the link closed. */
    boolean awaitLatency(ProxyLink link, long readAt) {
        return latencyNanos == 0 || awaitElapsed(link, readAt, () -> latencyNanos);
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
            ProxyLink link = new ProxyLink(this, ++lastLinkId, client, halfOpen);
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
        Thread thread = new Thread(body, FaultProxy.THREAD_NAME_PREFIX + port + "-" + name);
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

    private void closeLinks(Predicate<ProxyLink> which) {
        List<ProxyLink> current;
        synchronized (lock) {
            current = new ArrayList<>(links);
        }
        for (ProxyLink link : current) {
            if (which.test(link)) {
                link.close();
            }
        }
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
            socket.bind(new InetSocketAddress(FaultProxy.HOST, port), BACKLOG);
            return socket;
        } catch (IOException e) {
            closeQuietly(socket);
            throw new UncheckedIOException("cannot listen on " + FaultProxy.HOST + ":" + port + ": " + e.getMessage(), e);
        }
    }

    static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing is best effort: the socket is unusable either way
        }
    }
}
