package io.relock.internal.engine;

import io.relock.DistributedLock;
import io.relock.internal.support.Futures;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A lock whose {@link DistributedLock} methods are an engine's: the engine itself, or the fenced
 * lock that wraps one. The release with a minimum hold is implemented here once for both (see
 * {@link MinimumHold}).
 */
public interface EngineBacked extends DistributedLock {

    LockEngine engine();

    @Override
    default void unlock(Duration holdAtLeast) {
        LockEngine engine = engine();
        long nanos = MinimumHold.nanos(holdAtLeast);
        Futures.await(MinimumHold.release(engine, LockEngine.currentThreadId(), nanos), engine.describe("unlock"));
    }

    @Override
    default CompletionStage<Void> unlockAsync(long ownerId, Duration holdAtLeast) {
        return MinimumHold.release(engine(), ownerId, MinimumHold.nanos(holdAtLeast));
    }
}
