package io.relock.internal.engine;

import io.relock.ReleaseEvent;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.lease.Hold;
import io.relock.internal.support.Exceptions;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link LockEngine#release} of one hold of {@code owner}: the last hold is handed over to a
 * parked waiter of this client if its {@link Turn} has one, else the release goes through Redis
 * ({@link LockDriver#release}), is confirmed as acquires and renewals are
 * ({@link io.relock.internal.backend.WriteGateway#confirmWrite}), and the watchdog forgets the hold once the last one is gone.
 */
final class Release {

    private static final Logger LOG = LoggerFactory.getLogger(Release.class);

    private final LockEngine engine;
    private final LockClient client;
    private final long owner;
    private final boolean repeat;
    private final boolean callerBlocks;

    /**
     * {@code repeat} when an earlier release of the same hold failed and may have taken effect;
     * {@code callerBlocks} when the caller waits for the result (the synchronous {@code unlock()}).
     */
    Release(LockEngine engine, long owner, boolean repeat, boolean callerBlocks) {
        this.engine = engine;
        this.client = engine.client;
        this.owner = owner;
        this.repeat = repeat;
        this.callerBlocks = callerBlocks;
    }

    /** Fails with IllegalMonitorStateException if {@code owner} holds none. */
    CompletableFuture<Void> run() {
        client.checkOpen();
        Hold hold = client.watchdog().get(engine, owner);
        if (hold != null && hold.writePending()) {
            // The owner was told it held before Redis answered: this release follows that write.
            return hold.pending.thenCompose(ignored -> new Release(engine, owner, false, false).run());
        }
        if (hold != null && hold.count == 1 && !hold.lost && !repeat) {
            Turn turn = client.channels().existing(engine.keys().channel());
            CompletableFuture<Void> handedOver = turn == null ? null
                    : turn.handOver(engine, hold, client.replicaSync(), client.budget());
            if (handedOver != null) {
                return handedOver;
            }
        }
        String field = engine.fieldOf(owner);
        long lease = hold != null ? hold.leaseMillis : client.watchdog().leaseMillis();
        if (hold != null) {
            hold.releasing.incrementAndGet();
        }
        int held = hold != null ? hold.count : 0;
        return confirmed(new Request(field, lease, held, client.budget(), repeat && hold != null, 0, 0, callerBlocks))
                .handle((outcome, error) -> {
                    try {
                        return settle(hold, field, held, outcome, error);
                    } finally {
                        // Only once the hold is forgotten: a renewal that finds the key gone
                        // in between must not report the released hold as lost.
                        if (hold != null) {
                            hold.releasing.decrementAndGet();
                        }
                    }
                });
    }

    private Void settle(Hold hold, String field, int held, Long outcome, Throwable error) {
        if (error != null) {
            throw Exceptions.translate(engine.describe("unlock"), error);
        }
        if (outcome == null) {
            if (hold == null) {
                throw Exceptions.notHeld(engine.getName(), field);
            }
            client.watchdog().forget(hold);
            client.released(hold, ReleaseEvent.Outcome.LOST);
            engine.releasedThroughRedis();
            throw Exceptions.holdLost(engine.getName(), field, hold.leaseMillis, hold.watchdog, hold.lossCause);
        }
        if (outcome == 1) {
            if (hold != null) {
                client.watchdog().forget(hold);
                client.released(hold, ReleaseEvent.Outcome.RELEASED);
            }
            engine.releasedThroughRedis();
        } else if (hold != null) {
            hold.count = held - 1;
        }
        return null;
    }

    /**
     * Runs a release and confirms it as an acquire is confirmed. When the connection broke before
     * replicas acknowledged, the release runs again, as a repeat, on the server that answers now:
     * a promoted replica may still have what the old master released. Too few acknowledgements
     * are only logged: the release stands on the master, and a hold that a failover brings back
     * is renewed by no one, so it expires with its lease.
     */
    private CompletableFuture<Long> confirmed(Request request) {
        long epoch = client.gateway().connectionEpoch();
        CompletableFuture<Long> reply;
        try {
            reply = engine.driver().release(request);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.thenCompose(outcome -> outcome == null
                ? CompletableFuture.completedFuture(null)
                : client.gateway().confirmWrite(engine.key(), epoch).handle((confirmation, error) -> {
                    if (error == null && confirmation.unsure()
                            && request.budget().deadlineNanos() - client.nanoTime() > 0) {
                        return confirmed(new Request(request.field(), request.leaseMillis(),
                                request.holdsBefore(), request.budget(), true));
                    }
                    if (error != null || !confirmation.confirmed()) {
                        LOG.warn("released lock '{}' on the master, but replicas did not confirm it ({}); a failover "
                                + "now may bring the hold back until its lease runs out", engine.getName(),
                                error != null ? Exceptions.unwrap(error).toString()
                                        : confirmation.unsure() ? "the connection was re-established"
                                                : confirmation.acks() + " of " + client.gateway().replicaSyncMinReplicas()
                                                        + " replicas acknowledged");
                    }
                    return CompletableFuture.completedFuture(outcome);
                }).thenCompose(Function.identity()));
    }
}
