package io.relock.internal.redis;

import java.util.concurrent.CompletableFuture;

/**
 * The part of {@link RedisGateway} that every lock write goes through: the connection epoch,
 * and the one write confirmation of acquires, renewals and releases.
 * Narrow so that the watchdog and acquisitions can be unit-tested with a stand-in.
 */
public interface WriteGateway {

    /** See {@link RedisGateway#connectionEpoch()}. */
    long connectionEpoch();

    /** See {@link RedisGateway#confirmWrite(String, long)}. */
    CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore);

    /** For messages: how many replicas must acknowledge a write. */
    int replicaSyncMinReplicas();

    /** For messages: how long a write waits for them. */
    long replicaSyncTimeoutMillis();
}
