package io.relock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** How many requests a ZooKeeper server has received, from its {@code srvr} four-letter word. */
final class ZooKeeperRequests {

    private static final Pattern RECEIVED = Pattern.compile("Received: (\\d+)");

    private ZooKeeperRequests() {}

    /** The requests the server on 127.0.0.1:{@code port} has received so far, pings included. */
    static long received(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream request = socket.getOutputStream();
            request.write("srvr".getBytes(StandardCharsets.US_ASCII));
            request.flush();
            InputStream reply = socket.getInputStream();
            Matcher matcher = RECEIVED.matcher(new String(reply.readAllBytes(), StandardCharsets.US_ASCII));
            if (!matcher.find()) {
                throw new IllegalStateException("no request count in ZooKeeper's srvr answer");
            }
            return Long.parseLong(matcher.group(1));
        } catch (IOException e) {
            throw new IllegalStateException("cannot ask ZooKeeper for its request count", e);
        }
    }
}
