package io.relock.internal;

/** A lock whose {@link io.relock.DistributedLock} methods are an engine's: the engine itself, or the fenced lock that wraps one. */
interface EngineBacked {

    LockEngine engine();
}
