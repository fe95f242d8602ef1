package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FaultProxy} between a plain RESP socket client and a real redis-server: every fault is
 * checked from both ends, on the client's socket and directly on the server.
 */
class FaultProxyTest {

    /** Bounds every wait for something that should happen. */
    private static final Duration PROMPTLY = Duration.ofSeconds(5);
    /** How long "nothing arrives" is watched; the proxy forwards in well under a millisecond. */
    private static final Duration SILENCE = Duration.ofMillis(300);

    private static RedisServer server;

    private FaultProxy proxy;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.stop();
        }
    }

    @BeforeEach
    void startProxy() {
        server.flushAll();
        proxy = FaultProxy.to(server);
    }

    @AfterEach
    void closeProxy() {
        proxy.close();
    }

    @Test
    void forwardsCommandsAndRepliesInBothDirections() throws IOException {
        assertThat(proxy.host()).isEqualTo("127.0.0.1");
        assertThat(proxy.port()).isPositive().isNotEqualTo(server.port());
        assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());

        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");
            assertThat(client.call("SET", "greeting", "grüezi")).isEqualTo("OK");
            assertThat(client.call("GET", "greeting")).isEqualTo("grüezi");
            assertThat(proxy.openConnections()).isEqualTo(1);
        }

        assertThat(server.command("GET", "greeting")).isEqualTo("grüezi");
        assertThat(proxy.connectionsAccepted()).isEqualTo(1);
        // A counter is updated just after its write, so it may trail the reply by a moment.
        long requests = Resp.encode("PING").length + Resp.encode("SET", "greeting", "grüezi").length
                + Resp.encode("GET", "greeting").length;
        long replies = "+PONG\r\n+OK\r\n$7\r\ngrüezi\r\n".getBytes(StandardCharsets.UTF_8).length;
        await("bytesToServer() == " + requests, () -> proxy.bytesToServer() == requests);
        await("bytesToClient() == " + replies, () -> proxy.bytesToClient() == replies);
        await("the proxy to notice the client closed", () -> proxy.openConnections() == 0);
    }

    @Test
    void pipelinedCommandsLargerThanOneReadAllGetTheirRepliesInOrder() throws IOException {
        int commands = 2000; // about 50 KB of requests: several reads of the proxy
        byte[] one = Resp.encode("INCR", "pipelined");
        byte[] all = new byte[one.length * commands];
        for (int i = 0; i < commands; i++) {
            System.arraycopy(one, 0, all, i * one.length, one.length);
        }

        try (Client client = connect()) {
            client.sendRaw(all);
            for (long expected = 1; expected <= commands; expected++) {
                assertThat(client.reply()).isEqualTo(expected);
            }
        }

        await("bytesToServer() == " + all.length, () -> proxy.bytesToServer() == all.length);
    }

    @Test
    void cutBeforeRequestDropsTheCommandAndClosesTheConnection() throws IOException {
        server.command("SET", "counter", "5");
        FaultProxy.Fault fault = proxy.cutBeforeRequest("INCR");

        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");
            client.send("INCR", "counter");
            client.assertClosedWithoutReply();
        }

        fault.awaitTriggered(PROMPTLY);
        assertThat(fault.triggered()).isTrue();
        assertThat(server.command("GET", "counter")).as("the INCR never reached the server").isEqualTo("5");
        assertThat(proxy.bytesToServer()).isEqualTo(Resp.encode("PING").length);
        try (Client next = connect()) {
            assertThat(next.call("INCR", "counter")).as("the fault is spent").isEqualTo(6L);
        }
    }

    @Test
    void cutAfterRequestRunsTheCommandOnceButTheClientSeesNoReply() throws IOException {
        server.command("SET", "counter", "5");
        FaultProxy.Fault fault = proxy.cutAfterRequest("INCR");

        try (Client client = connect()) {
            client.send("INCR", "counter");
            client.assertClosedWithoutReply();
        }

        fault.awaitTriggered(PROMPTLY);
        await("the server to run the INCR", () -> "6".equals(server.command("GET", "counter")));
        assertThat(proxy.bytesToClient()).isZero();
        try (Client next = connect()) {
            assertThat(next.call("GET", "counter")).as("run exactly once").isEqualTo("6");
        }
    }

    @Test
    void cutBeforeReplyClosesTheConnectionOnlyAfterTheCommandRan() throws IOException {
        server.command("SET", "counter", "5");
        FaultProxy.Fault fault = proxy.cutBeforeReply("INCR");

        try (Client client = connect()) {
            client.send("INCR", "counter");
            client.assertClosedWithoutReply();
            // No polling: by the time the client sees the cut, the command has run.
            assertThat(server.command("GET", "counter")).isEqualTo("6");
        }

        fault.awaitTriggered(PROMPTLY);
        assertThat(proxy.bytesToClient()).isZero();
        try (Client next = connect()) {
            assertThat(next.call("GET", "counter")).as("run exactly once").isEqualTo("6");
        }
    }

    @Test
    void cutBeforeReplyOnEvalshaEndsTheConnectionOnlyAfterTheScriptRanAndARetryRunsItAgain() throws IOException {
        // Busy for 200 ms before its INCR, so a cut that does not wait for the script shows.
        String sha = (String) server.command("SCRIPT", "LOAD", "local start = redis.call('TIME')\n"
                + "repeat local now = redis.call('TIME')\n"
                + "until (now[1] - start[1]) * 1000000 + (now[2] - start[2]) >= 200000\n"
                + "return redis.call('INCR', KEYS[1])");
        FaultProxy.Fault fault = proxy.cutBeforeReply("EVALSHA");

        try (Client client = connect()) {
            long start = System.nanoTime();
            client.send("EVALSHA", sha, "1", "runs");
            client.assertClosedWithoutReply();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the cut waits for the script")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(200));
        }
        fault.awaitTriggered(PROMPTLY);
        assertThat(server.command("GET", "runs")).isEqualTo("1");

        // What a reconnecting client does: send the same command again.
        try (Client retry = connect()) {
            assertThat(retry.call("EVALSHA", sha, "1", "runs")).isEqualTo(2L);
        }
        assertThat(proxy.connectionsAccepted()).isEqualTo(2);
    }

    @Test
    void delayRepliesHoldsTheReplyBackThenDeliversItOnTheSameConnection() throws IOException {
        Duration delay = Duration.ofMillis(300);
        FaultProxy.Fault fault = proxy.delayReplies("slow-key", delay);

        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");
            long start = System.nanoTime();
            assertThat(client.call("SET", "slow-key", "v")).isEqualTo("OK");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(delay);
            fault.awaitTriggered(PROMPTLY);
            assertThat(client.call("GET", "slow-key")).as("the connection stays up").isEqualTo("v");
        }
        assertThat(proxy.connectionsAccepted()).isEqualTo(1);
    }

    @Test
    void delayDelaysEveryChunkInBothDirectionsUntilHealed() throws IOException {
        Duration latency = Duration.ofMillis(200);
        try (Client client = connect()) {
            proxy.delay(latency);

            long start = System.nanoTime();
            assertThat(client.call("PING")).isEqualTo("PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("request and reply each delayed")
                    .isGreaterThanOrEqualTo(latency.multipliedBy(2));

            proxy.heal();
            assertThat(client.call("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void blackholeForwardsNothingInEitherDirectionUntilHealed() throws IOException {
        server.command("SET", "counter", "5");
        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");

            proxy.blackhole();
            client.send("INCR", "counter");
            client.assertNoReplyWithin(SILENCE);
            try (Client late = connect()) {
                proxy.awaitConnections(2, PROMPTLY);
                late.send("INCR", "counter");
                late.assertNoReplyWithin(SILENCE);
            }
            assertThat(server.command("GET", "counter")).isEqualTo("5");
            assertThat(proxy.openConnections()).as("the first connection stays open").isGreaterThanOrEqualTo(1);

            proxy.heal();
            try (Client healed = connect()) {
                assertThat(healed.call("INCR", "counter")).as("the black-holed INCRs were dropped").isEqualTo(6L);
            }
        }
    }

    @Test
    void halfOpenDropsTheServerSideWhileTheClientWaitsOnAnOpenConnection() throws IOException {
        try (Client client = connect()) {
            assertThat(client.call("CLIENT", "SETNAME", "half-open-victim")).isEqualTo("OK");
            assertThat(clientList()).contains("name=half-open-victim");

            proxy.halfOpen();

            await("the server to see the client go", () -> !clientList().contains("name=half-open-victim"));
            client.send("PING");
            client.assertNoReplyWithin(SILENCE);
            try (Client late = connect()) {
                late.send("PING");
                late.assertNoReplyWithin(SILENCE);
                proxy.awaitConnections(2, PROMPTLY);
                assertThat(proxy.openConnections()).as("both client sides stay open").isEqualTo(2);
            }

            proxy.heal();
            client.assertClosedWithoutReply();
        }
        try (Client fresh = connect()) {
            assertThat(fresh.call("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void refuseRefusesNewConnectionsAndCutsOpenOnesUntilHealed() throws IOException {
        int port = proxy.port();
        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");

            proxy.refuse();

            client.assertClosedWithoutReply();
        }
        assertThatThrownBy(this::connect).isInstanceOf(ConnectException.class);

        proxy.heal();

        try (Client again = connect()) {
            assertThat(again.call("PING")).isEqualTo("PONG");
        }
        assertThat(proxy.port()).isEqualTo(port);
        assertThat(proxy.connectionsAccepted()).isEqualTo(2);
    }

    @Test
    void cutAllClosesEveryOpenConnectionAndNewOnesWork() throws IOException {
        try (Client first = connect(); Client second = connect()) {
            assertThat(first.call("PING")).isEqualTo("PONG");
            assertThat(second.call("PING")).isEqualTo("PONG");

            proxy.cutAll();

            first.assertClosedWithoutReply();
            second.assertClosedWithoutReply();
            assertThat(proxy.openConnections()).isZero();
        }
        try (Client third = connect()) {
            assertThat(third.call("PING")).isEqualTo("PONG");
        }
        assertThat(proxy.connectionsAccepted()).isEqualTo(3);
    }

    @Test
    void retargetSendsNewConnectionsToAnotherServerAndLeavesOpenOnesAlone() throws IOException {
        try (RedisServer second = RedisServer.start()) {
            server.command("SET", "where", "first");
            second.command("SET", "where", "second");
            try (Client before = connect()) {
                assertThat(before.call("GET", "where")).isEqualTo("first");

                proxy.retarget(second.host(), second.port());

                try (Client after = connect()) {
                    assertThat(after.call("GET", "where")).isEqualTo("second");
                }
                assertThat(before.call("GET", "where")).isEqualTo("first");
            }
        }
    }

    @Test
    void aConnectionThatCannotReachTheServerIsClosed() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(FaultProxy.HOST))) {
            closedPort = socket.getLocalPort();
        }
        proxy.retarget(FaultProxy.HOST, closedPort);

        try (Client client = connect()) {
            client.assertClosedWithoutReply();
        }
        await("the proxy to drop the connection", () -> proxy.openConnections() == 0);
    }

    @Test
    void aMarkerSplitAcrossTwoWritesStillTriggers() throws IOException {
        FaultProxy.Fault fault = proxy.cutBeforeRequest("split-marker");
        byte[] command = Resp.encode("INCR", "split-marker");
        int splitAt = new String(command, StandardCharsets.US_ASCII).indexOf("split-marker") + "split".length();

        try (Client client = connect()) {
            client.sendRaw(Arrays.copyOfRange(command, 0, splitAt));
            // The first half is forwarded on its own, so the second surely arrives in another read.
            await("the first half to be forwarded", () -> proxy.bytesToServer() == splitAt);
            assertThat(fault.triggered()).isFalse();
            client.sendRaw(Arrays.copyOfRange(command, splitAt, command.length));
            client.assertClosedWithoutReply();
        }

        fault.awaitTriggered(PROMPTLY);
        assertThat(server.command("EXISTS", "split-marker")).isEqualTo(0L);
    }

    @Test
    void oneShotFaultsFireOnceEachInArmingOrder() throws IOException {
        FaultProxy.Fault first = proxy.delayReplies("ECHO", Duration.ZERO);
        FaultProxy.Fault second = proxy.cutBeforeRequest("ECHO");

        try (Client client = connect()) {
            assertThat(client.call("ECHO", "one")).isEqualTo("one");
            first.awaitTriggered(PROMPTLY);
            assertThat(second.triggered()).as("one fault per chunk").isFalse();

            client.send("ECHO", "two");
            client.assertClosedWithoutReply();
        }
        second.awaitTriggered(PROMPTLY);

        try (Client client = connect()) {
            assertThat(client.call("ECHO", "three")).isEqualTo("three");
        }
    }

    @Test
    void aCancelledFaultDoesNotTriggerAndWaitingForItFailsNamingTheMarker() throws IOException {
        FaultProxy.Fault cancelled = proxy.cutBeforeRequest("PING");
        cancelled.cancel();

        try (Client client = connect()) {
            assertThat(client.call("PING")).isEqualTo("PONG");
        }
        assertThat(cancelled.triggered()).isFalse();
        assertThatThrownBy(() -> cancelled.awaitTriggered(PROMPTLY)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cutBeforeRequest(\"PING\")")
                .hasMessageContaining("cancelled");
    }

    @Test
    void awaitTriggeredTimesOutNamingTheMarkerAndKeepsTheInterruptFlag() {
        FaultProxy.Fault never = proxy.cutBeforeReply("never-sent");

        assertThatThrownBy(() -> never.awaitTriggered(Duration.ofMillis(50))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cutBeforeReply(\"never-sent\")")
                .hasMessageContaining("PT0.05S");

        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> never.awaitTriggered(PROMPTLY)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("never-sent")
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }

        proxy.close();
        assertThatThrownBy(() -> never.awaitTriggered(PROMPTLY)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("never-sent")
                .hasMessageContaining("closed");
    }

    @Test
    void awaitConnectionsWaitsForTheTotalAndNamesItOnTimeout() throws IOException {
        try (Client client = connect()) {
            proxy.awaitConnections(1, PROMPTLY);
            assertThat(client.call("PING")).isEqualTo("PONG");
        }

        assertThatThrownBy(() -> proxy.awaitConnections(2, Duration.ofMillis(50)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expected 2 connections")
                .hasMessageContaining("but 1 were");
    }

    @Test
    void closeEndsEveryThreadAndConnectionAndIsIdempotent() throws IOException {
        String prefix = FaultProxy.THREAD_NAME_PREFIX + proxy.port() + "-";
        try (Client first = connect(); Client second = connect()) {
            assertThat(first.call("CLIENT", "SETNAME", "closing-proxy-1")).isEqualTo("OK");
            assertThat(second.call("CLIENT", "SETNAME", "closing-proxy-2")).isEqualTo("OK");
            assertThat(threadsNamed(prefix)).as("an acceptor and two threads per connection").hasSize(5);

            proxy.close();

            assertThat(threadsNamed(prefix)).isEmpty();
            assertThat(proxy.openConnections()).isZero();
            first.assertClosedWithoutReply();
            second.assertClosedWithoutReply();
            await("the server to see both clients go", () -> !clientList().contains("name=closing-proxy-"));
        }
        assertThatThrownBy(this::connect).isInstanceOf(ConnectException.class);

        proxy.close();

        assertThatThrownBy(() -> proxy.cutAll()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> proxy.blackhole()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> proxy.heal()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> proxy.cutBeforeReply("x")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> proxy.retarget(server.host(), server.port())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> proxy.awaitConnections(0, PROMPTLY)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void rejectsBadArgumentsNamingThem() {
        assertThatThrownBy(() -> FaultProxy.to((RedisServer) null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("server");
        assertThatThrownBy(() -> FaultProxy.to(null, 6000)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("host");
        assertThatThrownBy(() -> FaultProxy.to(" ", 6000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host");
        assertThatThrownBy(() -> FaultProxy.to("127.0.0.1", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> proxy.retarget("127.0.0.1", 65536)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> proxy.cutBeforeRequest(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("marker");
        assertThatThrownBy(() -> proxy.cutAfterRequest("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("marker");
        assertThatThrownBy(() -> proxy.delayReplies("x", null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> proxy.delayReplies("x", Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> proxy.delay(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latency");
        assertThatThrownBy(() -> proxy.awaitConnections(-1, PROMPTLY)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("total");
        assertThatThrownBy(() -> proxy.awaitConnections(1, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("timeout");
        FaultProxy.Fault fault = proxy.cutBeforeReply("x");
        assertThatThrownBy(() -> fault.awaitTriggered(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeout");
    }

    private Client connect() throws IOException {
        return new Client(proxy.port());
    }

    private static String clientList() {
        return (String) server.command("CLIENT", "LIST");
    }

    private static List<String> threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(name -> name.startsWith(prefix))
                .collect(Collectors.toList());
    }

    /** Polls {@code condition} until it holds; fails after {@link #PROMPTLY}. */
    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PROMPTLY.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(deadline - System.nanoTime()).as("waiting for %s within %s", what, PROMPTLY).isPositive();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** A RESP client on one plain socket, with a bounded read timeout. */
    private static final class Client implements AutoCloseable {

        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Client(int port) throws IOException {
            socket = new Socket();
            try {
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(FaultProxy.HOST, port), (int) PROMPTLY.toMillis());
                socket.setSoTimeout((int) PROMPTLY.toMillis());
                in = new BufferedInputStream(socket.getInputStream());
                out = socket.getOutputStream();
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }

        void send(String... args) throws IOException {
            sendRaw(Resp.encode(args));
        }

        void sendRaw(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        Object reply() throws IOException {
            return Resp.read(in);
        }

        Object call(String... args) throws IOException {
            send(args);
            return reply();
        }

        /** Asserts that nothing arrives, and the connection stays open, for {@code silence}. */
        void assertNoReplyWithin(Duration silence) throws IOException {
            socket.setSoTimeout((int) silence.toMillis());
            try {
                int first = in.read();
                throw new AssertionError(first < 0 ? "the connection was closed" : "a reply arrived: '" + (char) first + "'");
            } catch (SocketTimeoutException expected) {
                // silence, on an open connection
            } finally {
                socket.setSoTimeout((int) PROMPTLY.toMillis());
            }
        }

        /** Asserts that the peer closes the connection (FIN or reset) before sending anything. */
        void assertClosedWithoutReply() throws IOException {
            try {
                int first = in.read();
                assertThat(first).as("first byte read: the connection should end without a reply").isEqualTo(-1);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the connection was still open after " + PROMPTLY, e);
            } catch (SocketException reset) {
                // closed with a reset: a cut as well
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
