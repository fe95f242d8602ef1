package io.relock.internal.support;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.protocol.RedisProtocolException;
import io.relock.LockForceUnlockedException;
import io.relock.RelockConnectionException;
import io.relock.RelockException;
import io.relock.RelockTimeoutException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Every exception message Relock builds for Redis trouble and for misuse of a lock. */
public final class Exceptions {

    private Exceptions() {}

    /** Strips the wrappers that CompletableFuture puts around the real failure. */
    public static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * Translates a client failure into a {@link RelockException}; JDK exceptions that are part
     * of the contract (misuse, bad arguments) and Relock's own pass through unchanged.
     *
     * @param operation what was being done, e.g. "acquire lock 'order:42'"
     */
    public static RuntimeException translate(String operation, Throwable error) {
        Throwable t = unwrap(error);
        if (t instanceof RelockException
                || t instanceof IllegalMonitorStateException
                || t instanceof IllegalArgumentException
                || t instanceof IllegalStateException
                || t instanceof NullPointerException) {
            return (RuntimeException) t;
        }
        if (t instanceof RedisCommandTimeoutException) {
            return new RelockTimeoutException("Redis did not answer in time: " + operation + ": " + t.getMessage(), t);
        }
        if (t instanceof RedisConnectionException || t instanceof IOException || isConnectionLoss(t)) {
            return new RelockConnectionException("Redis connection failed: " + operation + ": " + reason(t), t);
        }
        if (t instanceof RedisCommandExecutionException) {
            return new RelockException("Redis rejected the command: " + operation + ": " + t.getMessage(), t);
        }
        return new RelockException("Redis failure: " + operation + ": " + t, t);
    }

    /** Whether the failure may have happened after Redis applied the command. */
    public static boolean outcomeUnknown(Throwable error) {
        Throwable t = unwrap(error);
        // A failed connect (e.g. to a dead cluster node) means the command was never written.
        return !(t instanceof RedisCommandExecutionException || t instanceof IllegalMonitorStateException
                || t instanceof RedisConnectionException || t instanceof java.net.ConnectException
                || rejectedWhileDisconnected(t));
    }

    /** Lettuce refused to send the command: the connection was down at the time. */
    private static boolean rejectedWhileDisconnected(Throwable t) {
        return String.valueOf(t.getMessage()).contains("Currently not connected");
    }

    private static boolean isConnectionLoss(Throwable t) {
        String message = t.getMessage();
        return message != null && (message.contains("Connection closed") || message.contains("Connection reset")
                || message.contains("Connection refused") || message.contains("Connection disconnected")
                || rejectedWhileDisconnected(t));
    }

    public static RelockConnectionException cannotConnect(String target, Throwable cause) {
        Throwable top = unwrap(cause);
        String reason = reason(top);
        if (notRedis(top)) {
            // Lettuce's "Invalid first byte: 72 (H)" means an HTTP server, or another service, answered.
            return new RelockConnectionException("cannot connect to Redis at " + target + ": the server did not "
                    + "answer as Redis does (is another service listening on that port?): " + reason, top);
        }
        return new RelockConnectionException("cannot connect to Redis at " + target + ": " + reason, top);
    }

    /**
     * Lettuce's words when the connection was open but its Redis handshake handler was gone from
     * the channel by the time the connect completed: the peer spoke or closed before the client
     * could set up the handshake, which Redis never does. The server's own answer is lost in that
     * race; a further attempt usually sees it.
     */
    static final String HANDSHAKE_HANDLER_GONE = "RedisHandshakeHandler not registered";

    /** Whether {@code failure} is Lettuce's {@link #HANDSHAKE_HANDLER_GONE} (see there). */
    public static boolean handshakeHandlerGone(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof IllegalStateException && HANDSHAKE_HANDLER_GONE.equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    /**
     * What went wrong, for a person: the messages of the failure and its causes, each said once
     * (a cause whose words are in the message already adds nothing), addresses as
     * {@code host:port}, and Lettuce's handshake race in plain words.
     */
    public static String reason(Throwable failure) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            if (HANDSHAKE_HANDLER_GONE.equals(message)) {
                message = "the connection closed before the Redis handshake began";
            }
            // Each ": "-separated part once: "Connection refused: Connection refused" says it once, and a
            // cause that only adds the address said already adds nothing.
            for (String part : addresses(message).split(": ")) {
                if (!part.isBlank() && text.indexOf(part) < 0) {
                    text.append(text.length() == 0 ? "" : ": ").append(part);
                }
            }
        }
        return text.toString();
    }

    /**
     * {@code host:port} for Java's renderings of a socket address: {@code host/<unresolved>:port}
     * (never looked up), {@code host/1.2.3.4:port} and {@code /1.2.3.4:port} (no host name).
     */
    static String addresses(String message) {
        return ADDRESS.matcher(message).replaceAll(match -> {
            String host = match.group(1);
            String ip = match.group(2);
            String name = host.isEmpty() ? ip : host;
            return java.util.regex.Matcher.quoteReplacement(name + ":" + match.group(3));
        });
    }

    /** {@code [host]/(ip|<unresolved>):port} as InetSocketAddress.toString() writes it. */
    private static final java.util.regex.Pattern ADDRESS = java.util.regex.Pattern.compile(
            "(?<![\\w./-])([\\w.-]*)/(<unresolved>|[0-9a-fA-F:.]*[0-9a-fA-F]|\\[[0-9a-fA-F:.]+\\]):(\\d{1,5})\\b");

    /** Whether the server's reply was not Redis's protocol at all, or the handshake never began. */
    private static boolean notRedis(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RedisProtocolException) {
                return true;
            }
        }
        return handshakeHandlerGone(error);
    }

    public static IllegalStateException closed() {
        return new IllegalStateException("this Relock client is closed");
    }

    public static IllegalMonitorStateException notHeld(String lockName, String owner) {
        return new IllegalMonitorStateException("cannot unlock lock '" + lockName
                + "': it is not held by the current thread (owner " + owner + ")");
    }

    /** The cause of a hold's loss when a force-unlock removed it. */
    public static LockForceUnlockedException forceUnlocked(String lockName, String owner) {
        return new LockForceUnlockedException("lock '" + lockName + "' of owner " + owner
                + " was force-unlocked: a forceUnlock() removed it while it was held");
    }

    /** The owner did acquire the lock, but Redis no longer has its hold. */
    public static IllegalMonitorStateException holdLost(String lockName, String owner, long leaseMillis,
            boolean watchdog, Throwable lossCause) {
        String why;
        if (lossCause instanceof LockForceUnlockedException) {
            why = "it was force-unlocked while held";
        } else if (lossCause != null) {
            why = "the watchdog could not renew its lease before it ran out (" + unwrap(lossCause) + ")";
        } else if (watchdog) {
            why = "the lock was lost while held: its lease (" + leaseMillis
                    + " ms, renewed by the watchdog) ran out, it was force-unlocked, or Redis lost it";
        } else {
            why = "its lease of " + leaseMillis + " ms ran out before unlock (or it was force-unlocked)";
        }
        return new IllegalMonitorStateException("cannot unlock lock '" + lockName + "' for owner " + owner + ": "
                + why + "; another owner may have held it since");
    }
}
