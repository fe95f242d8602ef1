package io.relock.internal.support;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
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
     * Refused on a Lettuce I/O thread (see {@link #refuseIoThread}) unless already answered.
     */
    public static <T> T await(CompletableFuture<T> future, String operation) {
        if (!future.isDone()) {
            refuseIoThread(operation);
        }
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
     * Throws {@link IllegalStateException} when the calling thread is one of Lettuce's I/O
     * threads (a Netty event loop named by Lettuce's thread factory, as every Relock client's
     * are): a blocking call there waits for a reply that this very thread, or its sibling, must
     * read, so it could only run into the command timeout. Reactive work runs there when it is
     * subscribed to by the thread that completed an acquire. Call it before sending anything
     * that must not be left behind (an acquire); after sending a read is harmless.
     *
     * @param operation what the caller was about to wait for, e.g. "acquire lock 'x'"
     */
    public static void refuseIoThread(String operation) {
        EventExecutor executor = ThreadExecutorMap.currentExecutor();
        Thread thread = Thread.currentThread();
        if (executor instanceof EventLoop && thread.getName().startsWith("lettuce-")) {
            throw new IllegalStateException("cannot " + operation + ": a blocking call on " + thread.getName()
                    + ", an I/O thread of Relock's Redis client, would wait for a reply that this thread must read"
                    + " (it could only run into the command timeout). Move the work off this thread:"
                    + " publishOn(Schedulers.boundedElastic()) before it in a Reactor pipeline,"
                    + " withContext(Dispatchers.IO) in a coroutine; or use the async methods");
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
