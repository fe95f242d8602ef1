package io.relock.internal.redis;

import io.relock.RelockConfig;
import io.relock.internal.backend.WriteConfirmation;
import io.relock.internal.support.Exceptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Replica sync: a lock write counts once enough replicas have it, so that a failover cannot
 * lose it. {@code WAIT} after the write, on the connection that made it, counts them.
 */
final class ReplicaSync {

    private static final CompletableFuture<WriteConfirmation> CONFIRMED =
            CompletableFuture.completedFuture(WriteConfirmation.CONFIRMED);

    private final int minReplicas;
    private final long timeoutMillis;
    private final Connected connected;
    private final ConnectionState state;

    ReplicaSync(RelockConfig config, Connected connected, ConnectionState state) {
        this.minReplicas = config.replicaSyncMinReplicas();
        this.timeoutMillis = config.replicaSyncTimeout().toMillis();
        this.connected = connected;
        this.state = state;
    }

    /** Whether writes wait for replicas at all. */
    boolean enabled() {
        return minReplicas > 0;
    }

    int minReplicas() {
        return minReplicas;
    }

    long timeoutMillis() {
        return timeoutMillis;
    }

    /** See {@link RedisGateway#confirmWrite(String, long)}. */
    CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
        if (minReplicas == 0) {
            return CONFIRMED;
        }
        return waitForReplicas(key).handle((acks, error) -> {
            // WAIT counts the writes of the connection it runs on: after a reconnect it answers
            // for a connection that wrote nothing, perhaps on a promoted replica without the write.
            if (state.epoch() != epochBefore
                    || (error != null && RetryLoop.transientFailure(Exceptions.unwrap(error)))) {
                return WriteConfirmation.UNSURE;
            }
            if (error != null) {
                throw error instanceof CompletionException completion ? completion : new CompletionException(error);
            }
            return acks >= minReplicas ? WriteConfirmation.CONFIRMED : WriteConfirmation.tooFew(acks);
        });
    }

    /**
     * Sends {@code WAIT} on the connection that wrote {@code key}, completing with the number of
     * replicas that acknowledged this connection's writes so far.
     */
    private CompletableFuture<Long> waitForReplicas(String key) {
        if (connected.cluster == null) {
            return connected.commands.waitForReplication(minReplicas, timeoutMillis).toCompletableFuture();
        }
        // WAIT counts the writes of one connection: it must go to the node connection the
        // slot's writes went through.
        return connected.slotMaster(key)
                .thenCompose(node -> node.async().waitForReplication(minReplicas, timeoutMillis));
    }
}
