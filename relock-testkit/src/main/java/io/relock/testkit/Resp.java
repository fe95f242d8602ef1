package io.relock.testkit;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A minimal RESP2 client: one command per short-lived connection, enough for test set-up and
 * assertions without depending on a Redis client library.
 */
final class Resp {

    private Resp() {
    }

    /**
     * Connects to {@code host:port}, sends one command and reads its reply.
     *
     * @param timeout bounds the connect and each read
     * @return the reply: {@link String} for simple and bulk strings, {@link Long} for integers,
     *     {@code List<Object>} for arrays (an error inside an array, as {@code EXEC} may return,
     *     is an element of type {@link RedisServer.CommandException}), {@code null} for null
     *     bulk strings and null arrays
     * @throws RedisServer.CommandException if the reply is an error
     * @throws IOException if the connection fails, times out (then a
     *     {@link java.net.SocketTimeoutException}), is closed before the reply is complete, or
     *     the reply is not RESP2
     */
    static Object call(String host, int port, Duration timeout, String... args) throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            OutputStream out = new BufferedOutputStream(socket.getOutputStream());
            out.write(encode(args));
            out.flush();
            Object reply = read(new BufferedInputStream(socket.getInputStream()));
            if (reply instanceof RedisServer.CommandException error) {
                throw error;
            }
            return reply;
        }
    }

    /**
     * Sends several commands on one connection, pipelined, and reads their replies in order —
     * for commands that depend on the connection's earlier ones, such as {@code WAIT}, which
     * waits for the connection's own writes to reach the replicas.
     *
     * @param timeout bounds the connect and each read
     * @return the replies, typed as by {@link #call}
     * @throws RedisServer.CommandException the first error reply, once all replies are read
     * @throws IOException as {@link #call}
     */
    static List<Object> pipeline(String host, int port, Duration timeout, List<List<String>> commands) throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            OutputStream out = new BufferedOutputStream(socket.getOutputStream());
            for (List<String> command : commands) {
                out.write(encode(command.toArray(new String[0])));
            }
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            List<Object> replies = new ArrayList<>(commands.size());
            RedisServer.CommandException firstError = null;
            for (int i = 0; i < commands.size(); i++) {
                Object reply = read(in);
                if (reply instanceof RedisServer.CommandException error && firstError == null) {
                    firstError = error;
                }
                replies.add(reply);
            }
            if (firstError != null) {
                throw firstError;
            }
            return Collections.unmodifiableList(replies);
        }
    }

    static byte[] encode(String... args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        writeAscii(bytes, "*" + args.length + "\r\n");
        for (String arg : args) {
            byte[] data = arg.getBytes(StandardCharsets.UTF_8);
            writeAscii(bytes, "$" + data.length + "\r\n");
            bytes.writeBytes(data);
            writeAscii(bytes, "\r\n");
        }
        return bytes.toByteArray();
    }

    /** Reads one reply; an error reply is returned, not thrown, so that arrays can hold errors. */
    static Object read(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed before the reply");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                return new RedisServer.CommandException(line);
            case ':':
                return parseLong(line);
            case '$': {
                long length = parseLong(line);
                if (length < 0) {
                    return null;
                }
                if (length > Integer.MAX_VALUE - 2) {
                    throw new IOException("bulk string too long: " + length);
                }
                byte[] data = in.readNBytes((int) length);
                if (data.length != length || in.read() != '\r' || in.read() != '\n') {
                    throw new EOFException("connection closed inside a bulk string");
                }
                return new String(data, StandardCharsets.UTF_8);
            }
            case '*': {
                long count = parseLong(line);
                if (count < 0) {
                    return null;
                }
                List<Object> elements = new ArrayList<>((int) Math.min(count, 1024));
                for (long i = 0; i < count; i++) {
                    elements.add(read(in));
                }
                return Collections.unmodifiableList(elements);
            }
            default:
                throw new IOException("not a RESP2 reply (type byte '" + (char) type + "'): " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed inside a reply line");
            }
            if (b == '\r') {
                int next = in.read();
                if (next != '\n') {
                    throw new IOException("malformed reply: CR not followed by LF");
                }
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    private static long parseLong(String text) throws IOException {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IOException("malformed integer in reply: " + text, e);
        }
    }

    private static void writeAscii(ByteArrayOutputStream out, String text) {
        out.writeBytes(text.getBytes(StandardCharsets.US_ASCII));
    }
}
