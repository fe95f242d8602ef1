package io.relock.internal.support;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;

/** Blocking on the client's futures from the synchronous API, and the stages of the async API. */
public final class Futures {

    private Futures() {}

    /**
     * Waits for a single command (Lettuce bounds it by the command timeout), without giving up
     * on interrupt: the interrupt flag is restored afterwards, as {@code Lock.lock()} does.
     */
    public static <T> T await(CompletableFuture<T> future, String operation) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw Exceptions.translate(operation, e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The stage an async acquire hands its caller: {@code map}'s view of {@code source}, which
     * the caller may cancel. A cancel completes the stage at once and runs {@code stop} (leave
     * the wait); whatever {@code source} then brings that the stage can no longer deliver (a
     * hold won in a race with the cancel) goes to {@code abandon}, which must undo it. Exactly
     * one of the caller and {@code abandon} ends up with the result: whichever completes the
     * stage first decides.
     */
    public static <R, T> CompletableFuture<T> cancellable(CompletableFuture<R> source,
            Function<? super R, ? extends T> map, Runnable stop, Consumer<? super R> abandon) {
        CompletableFuture<T> stage = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                if (completeExceptionally(new CancellationException("the acquire was cancelled"))) {
                    stop.run();
                }
                return isCancelled();
            }
        };
        source.whenComplete((value, error) -> {
            if (error != null) {
                stage.completeExceptionally(error);
            } else if (!stage.complete(map.apply(value))) {
                abandon.accept(value);
            }
        });
        return stage;
    }
}
