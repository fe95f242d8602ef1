package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;

/**
 * What the drivers of one lock key share: the client and the names, and the reads and the
 * force-release that do not depend on the layout's details.
 */
abstract class KeyDriver implements LockDriver {

    final ClientRuntime runtime;
    final LockKeys keys;

    KeyDriver(ClientRuntime runtime, LockKeys keys) {
        this.runtime = runtime;
        this.keys = keys;
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

    /** Deletes the key and announces the release. */
    @Override
    public CompletableFuture<Long> forceRelease() {
        return runtime.gateway().eval(Script.LOCK_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE);
    }
}
