package io.relock.internal;

import io.relock.internal.engine.LockEngine;
import io.relock.internal.lease.Hold;
import io.relock.internal.lease.Watchdog;
import io.relock.internal.support.Exceptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Releases every hold of every owner of a client, owner-checked, each hold once, as
 * {@code unlock()} would: what the JVM shutdown hook does once the client's elections yielded
 * (see {@link ClientRuntime#releaseAndClose()}).
 *
 * @param done completes when every release answered, never exceptionally
 * @param released the locks released, with how many owners released each
 * @param failed the holds that could not be released, with why
 */
record HoldRelease(CompletableFuture<Void> done, Map<String, Long> released, List<String> failed) {

    /** Starts releasing what {@code watchdog} knows to be held and not lost. */
    static HoldRelease start(Watchdog watchdog) {
        Map<String, Long> released = new ConcurrentHashMap<>();
        List<String> failed = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (Hold hold : watchdog.holds()) {
            if (hold.lost || hold.count <= 0 || !(hold.lock instanceof LockEngine engine)) {
                continue;
            }
            releases.add(releaseAll(engine, hold.owner, hold.count).handle((ignored, error) -> {
                if (error == null) {
                    released.merge(hold.lock.getName(), 1L, Long::sum);
                } else {
                    failed.add("'" + hold.lock.getName() + "' of " + hold.field + " (" + Exceptions.unwrap(error)
                            + ")");
                }
                return null;
            }));
        }
        return new HoldRelease(CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)), released, failed);
    }

    /** Releases {@code times} holds of {@code owner}, one after another: each reads the count the last left. */
    private static CompletableFuture<Void> releaseAll(LockEngine engine, long owner, int times) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int i = 0; i < times; i++) {
            chain = chain.thenCompose(ignored -> engine.release(owner));
        }
        return chain;
    }
}
