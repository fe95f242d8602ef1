package io.relock.internal.backend;

/** What every back end whose waiters take turns agrees on about a grant (see {@code engine.Turn}). */
public final class Grants {

    private Grants() {}

    /**
     * How long a grant lasts until its waiter claims it: what a dead next waiter costs. The
     * store's side (Redis's {@code grant.lua}) and the engine's wait both read it from here.
     */
    public static final long LEASE_MILLIS = 2000;
}
