package com.example.modulepath;

import io.relock.DistributedLock;
import io.relock.Relock;

/** Charges an order while holding its lock. */
public final class Orders {

    private final Relock relock;
    private int charged;

    public Orders(Relock relock) {
        this.relock = relock;
    }

    /** Charges order {@code id} under lock {@code order:<id>}; returns how many charges ran so far. */
    public int charge(long id) {
        DistributedLock lock = relock.getLock("order:" + id);
        lock.lock();
        try {
            return ++charged;
        } finally {
            lock.unlock();
        }
    }
}
