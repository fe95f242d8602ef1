package io.relock.internal.support;

import io.relock.AcquireEvent;
import io.relock.ForceUnlockEvent;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.ReleaseEvent;
import io.relock.WatchdogTickEvent;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's observers, called one after another. The array is replaced on change and read
 * once per event, so the hot path pays one volatile read when there are none.
 */
public final class Observers {

    private static final Logger LOG = LoggerFactory.getLogger(Observers.class);
    private static final LockObserver[] NONE = {};

    private volatile LockObserver[] all;

    public Observers(List<LockObserver> initial) {
        all = initial.toArray(NONE);
    }

    public boolean any() {
        return all.length > 0;
    }

    public synchronized void add(LockObserver observer) {
        Args.notNull(observer, "observer");
        Args.require(!Arrays.asList(all).contains(observer), "observer %s was added already", observer);
        LockObserver[] grown = Arrays.copyOf(all, all.length + 1);
        grown[all.length] = observer;
        all = grown;
    }

    public synchronized boolean remove(LockObserver observer) {
        Args.notNull(observer, "observer");
        List<LockObserver> rest = new java.util.ArrayList<>(Arrays.asList(all));
        boolean removed = rest.remove(observer);
        all = rest.toArray(NONE);
        return removed;
    }

    /** The observers an acquire started with and what each returned: its end goes to the same ones. */
    public record Started(LockObserver[] observers, Object[] contexts) {}

    /**
     * The acquire's start for every observer. Its end goes to these observers, with their
     * contexts, even if observers are added or removed meanwhile: one added later never sees an
     * end without its start, one removed still ends what it started.
     */
    public Started acquireStarted(String lockName, String lockType, long owner) {
        LockObserver[] observers = all;
        Object[] contexts = new Object[observers.length];
        for (int i = 0; i < observers.length; i++) {
            try {
                contexts[i] = observers[i].onAcquireStart(lockName, lockType, owner);
            } catch (RuntimeException e) {
                failed(observers[i], "onAcquireStart", e);
            }
        }
        return new Started(observers, contexts);
    }

    public static void acquireEnded(AcquireEvent event, Started started) {
        LockObserver[] observers = started.observers();
        for (int i = 0; i < observers.length; i++) {
            try {
                observers[i].onAcquireEnd(event, started.contexts()[i]);
            } catch (RuntimeException e) {
                failed(observers[i], "onAcquireEnd", e);
            }
        }
    }

    public void released(ReleaseEvent event) {
        for (LockObserver observer : all) {
            try {
                observer.onRelease(event);
            } catch (RuntimeException e) {
                failed(observer, "onRelease", e);
            }
        }
    }

    public void lost(LockLostEvent event) {
        for (LockObserver observer : all) {
            try {
                observer.onLockLost(event);
            } catch (RuntimeException e) {
                failed(observer, "onLockLost", e);
            }
        }
    }

    public void forceUnlocked(ForceUnlockEvent event) {
        for (LockObserver observer : all) {
            try {
                observer.onForceUnlock(event);
            } catch (RuntimeException e) {
                failed(observer, "onForceUnlock", e);
            }
        }
    }

    public void ticked(WatchdogTickEvent event) {
        for (LockObserver observer : all) {
            try {
                observer.onWatchdogTick(event);
            } catch (RuntimeException e) {
                failed(observer, "onWatchdogTick", e);
            }
        }
    }

    private static void failed(LockObserver observer, String method, RuntimeException e) {
        LOG.warn("LockObserver {} failed in {}; the lock is not affected", observer, method, e);
    }
}
