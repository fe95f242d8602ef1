package io.relock.internal.types;

import io.relock.internal.engine.LockDriver;
import java.util.concurrent.CompletableFuture;

/** The driver of a fenced lock on any back end: its acquires hand out tokens, and it reads the holder's. */
public interface TokenDriver extends LockDriver {

    /** The token of the current holder, or null when the lock is free. */
    CompletableFuture<Long> token();
}
