package io.relock.internal.engine;

/** A lock whose {@link io.relock.DistributedLock} methods are an engine's: the engine itself, or the fenced lock that wraps one. */
public interface EngineBacked {

    LockEngine engine();
}
