package io.relock.internal.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.netty.util.Timer;
import io.relock.internal.backend.Budget;
import io.relock.internal.support.Exceptions;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tries a call again through connection trouble and failovers, within the caller's
 * {@link Budget}. Lettuce never re-sends a command by itself (a command in flight when its
 * connection breaks fails, one issued while disconnected fails at once): this loop is the only
 * place that repeats one, and it tells the call which attempt it makes. Budgets are instants of
 * the client's clock.
 */
final class RetryLoop implements AutoCloseable {

    /** The longest pause between two tries: short, since a reconnect or a promotion is awaited. */
    static final long MAX_RETRY_PAUSE_MILLIS = Budget.MAX_RETRY_PAUSE_MILLIS;

    private static final Logger LOG = LoggerFactory.getLogger(RetryLoop.class);

    private final Timer timer;
    private final LongSupplier nanoTime;
    private final long commandTimeoutNanos;
    private final boolean canFailOver;
    private final java.util.function.BooleanSupplier unreachable;
    private final Consumer<Throwable> recovery;
    private volatile boolean closed;

    /**
     * @param canFailOver whether another server can take the place of one that refuses
     *     connections (Sentinel, cluster)
     * @param recovery the topology's help after a transient failure, before the next try
     */
    RetryLoop(Timer timer, LongSupplier nanoTime, long commandTimeoutNanos, boolean canFailOver,
            java.util.function.BooleanSupplier unreachable, Consumer<Throwable> recovery) {
        this.timer = timer;
        this.nanoTime = nanoTime;
        this.commandTimeoutNanos = commandTimeoutNanos;
        this.canFailOver = canFailOver;
        this.unreachable = unreachable;
        this.recovery = recovery;
    }

    /** See {@link RedisGateway#budget()}. */
    Budget budget() {
        long now = nanoTime.getAsLong();
        return new Budget(now + commandTimeoutNanos, now);
    }

    /** See {@link RedisGateway#budget(long)}. */
    Budget budget(long waitDeadlineNanos) {
        long now = nanoTime.getAsLong();
        // Patient until the wait ends, whatever the topology: a restarting server refuses
        // connections for a moment, as a holder keeps the lock for a moment.
        long atLeast = now + commandTimeoutNanos;
        return new Budget(waitDeadlineNanos - atLeast > 0 ? waitDeadlineNanos : atLeast, waitDeadlineNanos);
    }

    /** Runs {@code call} with attempt 0, then 1, 2, … after each transient failure, while {@code budget} lasts. */
    <T> CompletableFuture<T> run(Budget budget, IntFunction<CompletableFuture<T>> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        tryOnce(budget, call, 0, null, result);
        return result;
    }

    /**
     * {@code uncertain}: the first failure of an earlier try that may have reached Redis, or
     * null. The call fails with it rather than with a last failure that did not (a refused
     * connection): the caller must still take the call for one whose outcome is unknown.
     */
    private <T> void tryOnce(Budget budget, IntFunction<CompletableFuture<T>> call, int attempt, Throwable uncertain,
            CompletableFuture<T> result) {
        CompletableFuture<T> reply;
        try {
            reply = call.apply(attempt);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            Throwable failure = Exceptions.unwrap(error);
            Throwable unsure = uncertain != null || !Exceptions.outcomeUnknown(failure) ? uncertain : failure;
            long pauseMillis = Math.min(MAX_RETRY_PAUSE_MILLIS, 10L << Math.min(attempt, 5));
            long now = nanoTime.getAsLong();
            boolean refused = !canFailOver && unreachable.getAsBoolean() && now - budget.patientUntilNanos() >= 0;
            if (closed || !transientFailure(failure) || refused || budget.stopped().getAsBoolean()
                    || now + TimeUnit.MILLISECONDS.toNanos(pauseMillis) - budget.deadlineNanos() > 0) {
                if (unsure != null && unsure != failure) {
                    unsure.addSuppressed(failure);
                    result.completeExceptionally(unsure);
                } else {
                    result.completeExceptionally(failure);
                }
                return;
            }
            LOG.debug("retrying after {} (attempt {})", failure.toString(), attempt + 1);
            recovery.accept(failure);
            timer.newTimeout(timeout -> tryOnce(budget, call, attempt + 1, unsure, result), pauseMillis,
                    TimeUnit.MILLISECONDS);
        });
    }

    /**
     * Failures after which the same call may succeed: the connection broke or is being
     * re-established, the command timed out, or the node is not (yet) a writable master.
     */
    static boolean transientFailure(Throwable failure) {
        if (failure instanceof RedisCommandTimeoutException || failure instanceof RedisConnectionException
                || failure instanceof IOException) {
            return true;
        }
        String message = String.valueOf(failure.getMessage());
        if (failure instanceof RedisCommandExecutionException) {
            return message.startsWith("READONLY") || message.startsWith("MASTERDOWN") || message.startsWith("LOADING")
                    || message.startsWith("CLUSTERDOWN") || message.startsWith("TRYAGAIN");
        }
        return failure instanceof RedisException && (message.contains("not connected")
                || message.contains("Connection disconnected") || message.contains("Connection closed")
                || message.contains("Connection reset"));
    }

    /** Ends every retry at its next failure. */
    @Override
    public void close() {
        closed = true;
    }
}
