package io.relock.internal.support;

import java.util.concurrent.atomic.AtomicLong;

/** The async owner ids of this JVM ({@code Relock.newOwnerId()}): below zero, where thread ids never are. */
public final class OwnerIds {

    private static final AtomicLong LAST = new AtomicLong();

    private OwnerIds() {}

    /** A negative id never returned before in this JVM. */
    public static long next() {
        return LAST.decrementAndGet();
    }
}
