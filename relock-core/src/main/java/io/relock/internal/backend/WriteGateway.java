package io.relock.internal.backend;

import java.util.concurrent.CompletableFuture;

/**
 * The part of a back end that every lock write goes through: the connection epoch, and the one
 * write confirmation of acquires, renewals and releases. Redis's gateway confirms a write on its
 * replicas when asked to; a store whose commit is durable confirms every write at once.
 * Narrow so that the watchdog and acquisitions can be unit-tested with a stand-in.
 */
public interface WriteGateway {

    /** Counts the connection's breaks: a write whose epoch changed may have reached another server. */
    long connectionEpoch();

    /** Confirms a write to {@code key} made in {@code epochBefore}: whether it survives a failover. */
    CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore);

    /** For messages: how many replicas must acknowledge a write. */
    int replicaSyncMinReplicas();

    /** For messages: how long a write waits for them. */
    long replicaSyncTimeoutMillis();
}
