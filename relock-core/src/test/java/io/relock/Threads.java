package io.relock;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** Runs blocking test code on its own thread (never a shared pool that blocking could starve). */
final class Threads {

    private Threads() {}

    interface Body<T> {
        T call() throws Exception;
    }

    static <T> CompletableFuture<T> call(Body<T> body) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(body.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        thread.setDaemon(true);
        thread.start();
        return result;
    }

    static CompletableFuture<Void> run(Callable<?> body) {
        return call(() -> {
            body.call();
            return null;
        });
    }
}
