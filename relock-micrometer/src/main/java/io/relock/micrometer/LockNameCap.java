package io.relock.micrometer;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The first {@code max} distinct lock names seen keep their name; every later one is reported as
 * {@link #OTHER}. Thread-safe; once full, an unknown name costs one set look-up and no lock.
 */
final class LockNameCap {

    /** The tag value that stands for every lock name past the cap. */
    static final String OTHER = "_other";

    private final int max;
    private final Set<String> admitted = ConcurrentHashMap.newKeySet();
    private volatile boolean full;

    LockNameCap(int max) {
        this.max = max;
    }

    /** {@code name} itself if it is (or now becomes) one of the admitted names, else {@link #OTHER}. */
    String admit(String name) {
        if (admitted.contains(name) || OTHER.equals(name)) {
            return name;
        }
        if (full) {
            return OTHER;
        }
        synchronized (this) {
            if (admitted.size() < max) {
                admitted.add(name);
                return name;
            }
            full = true;
            return OTHER;
        }
    }

    static int requireValid(int maxLockNames) {
        if (maxLockNames < 1) {
            throw new IllegalArgumentException("maxLockNames must be at least 1: " + maxLockNames);
        }
        return maxLockNames;
    }
}
