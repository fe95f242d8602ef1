package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.redis.Script;
import java.util.concurrent.CompletableFuture;

/**
 * What the drivers of one lock key share: the client and the names, and the reads and the
 * force-release that do not depend on the layout's details.
 */
abstract class KeyDriver implements LockDriver {

    final DriverClient runtime;
    final LockKeys keys;
    private final String type;

    KeyDriver(DriverClient runtime, LockKeys keys, String type) {
        this.runtime = runtime;
        this.keys = keys;
        this.type = type;
    }

    /** Runs {@code script} for {@code request}: within its budget, the gateway adding its repeat flag. */
    final <T> CompletableFuture<T> eval(Request request, Script script, ScriptOutputType type, String[] keys,
            String... args) {
        return runtime.gateway().eval(script, type, request.budget(), request.repeat(), keys, args);
    }

    /** The type's name, as {@link LockTypes} gave it. */
    @Override
    public final String type() {
        return type;
    }

    /** A {@link #keep} of a lock whose owner lives in a hash of counts ({@code 'hash'}) or as a plain token ({@code 'string'}). */
    final CompletableFuture<Long> keepIn(String field, long keepMillis, String layout) {
        return runtime.gateway().eval(Script.LOCK_KEEP, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, Long.toString(keepMillis), field, layout,
                UnlockChannels.UNLOCK_MESSAGE);
    }

    /** The count in the lock hash's field {@code field}, 0 when it has none. */
    final CompletableFuture<Integer> hashCount(String field) {
        return runtime.gateway().hashField(keys.key(), field).thenApply(count -> count == null ? 0 : Integer.parseInt(count));
    }

    /** Whether the key exists. */
    @Override
    public CompletableFuture<Boolean> isLocked() {
        return runtime.gateway().exists(keys.key());
    }

    /** Deletes the key and announces the release if it holds a hash lock without a mode. */
    @Override
    public CompletableFuture<Long> forceRelease() {
        return forceRelease("hash");
    }

    /** Deletes the key and announces the release if it holds a lock of {@code layout} ({@code lock_force_release.lua}). */
    final CompletableFuture<Long> forceRelease(String layout) {
        return runtime.gateway().eval(Script.LOCK_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE, layout, forcedNoteMillis());
    }

    /**
     * How long a force-release's note of the holders it removed lives (see {@code lock_rule.lua}):
     * one watchdog timeout, so that a holder's watchdog, renewing every third of one, reads it.
     */
    final String forcedNoteMillis() {
        return Long.toString(runtime.watchdog().leaseMillis());
    }
}
