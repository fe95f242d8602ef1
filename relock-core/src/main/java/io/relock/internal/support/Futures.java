package io.relock.internal.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Blocking on the client's futures from the synchronous API. */
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
}
