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
            return new RelockConnectionException("Redis connection failed: " + operation + ": " + t.getMessage(), t);
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
        Throwable root = top;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        // "Unable to connect" alone hides WRONGPASS or a certificate error deeper down.
        String reason = root == top || String.valueOf(top.getMessage()).contains(String.valueOf(root.getMessage()))
                ? top.getMessage() : top.getMessage() + ": " + root.getMessage();
        if (notRedis(top)) {
            // Lettuce's "Invalid first byte: 72 (H)" means an HTTP server, or another service, answered.
            return new RelockConnectionException("cannot connect to Redis at " + target + ": the server did not "
                    + "answer as Redis does (is another service listening on that port?): " + reason, top);
        }
        return new RelockConnectionException("cannot connect to Redis at " + target + ": " + reason, top);
    }

    /** Whether the server's reply was not Redis's protocol at all. */
    private static boolean notRedis(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RedisProtocolException) {
                return true;
            }
        }
        return false;
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
