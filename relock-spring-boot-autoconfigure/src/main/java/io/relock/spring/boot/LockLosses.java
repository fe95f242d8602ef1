package io.relock.spring.boot;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.Relock;

/**
 * The last {@value #CAPACITY} lease losses of one client, newest first, for the {@code locks}
 * endpoint. A {@link LockListener} on the client from {@link #register(Relock, Clock)} until
 * {@link #close()}; the client calls it on a worker thread, so recording takes a short lock and
 * nothing else.
 */
final class LockLosses implements LockListener, AutoCloseable {

    /** How many losses are kept; older ones are dropped. */
    static final int CAPACITY = 20;

    private final Relock relock;
    private final Clock clock;
    private final Deque<LocksEndpoint.LockLoss> recent = new ArrayDeque<>(CAPACITY);

    private LockLosses(Relock relock, Clock clock) {
        this.relock = relock;
        this.clock = clock;
    }

    /** A history listening to {@code relock} from now on. */
    static LockLosses register(Relock relock, Clock clock) {
        LockLosses losses = new LockLosses(relock, clock);
        relock.addLockListener(losses);
        return losses;
    }

    @Override
    public void onLockLost(LockLostEvent event) {
        Throwable cause = event.cause();
        LocksEndpoint.LockLoss loss = new LocksEndpoint.LockLoss(event.lockName(),
                relock.clientId() + ":" + event.ownerThreadId(), event.ownerThreadId(),
                cause == null ? "the lock was gone from Redis at renewal"
                        : cause.getMessage() != null ? cause.getMessage() : cause.getClass().getName(),
                clock.instant().toString());
        synchronized (recent) {
            if (recent.size() == CAPACITY) {
                recent.removeLast();
            }
            recent.addFirst(loss);
        }
    }

    /** The kept losses, newest first. */
    List<LocksEndpoint.LockLoss> recent() {
        synchronized (recent) {
            return List.copyOf(new ArrayList<>(recent));
        }
    }

    /** Stops listening; the client may outlive the context that made this history. */
    @Override
    public void close() {
        relock.removeLockListener(this);
    }
}
