package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.Renewal;
import io.relock.internal.engine.LockDriver.HandedOver;
import io.relock.internal.engine.Turn;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.redis.Script;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The reentrant lock in Redisson's layout: a hash from owner to hold count, expiring after the
 * lease, with releases announced on {@code redisson_lock__channel:{name}}. The spin lock is the
 * same layout under another name, waiting by backoff.
 *
 * <p>Its waiters take turns (see {@link Turn} for the words): a subscribed waiter queues a ticket
 * in {@code {name}:handoff}, and the release that ends the last hold grants the lock to the
 * first live ticket and publishes it instead of {@code 0} ({@code grant.lua}); only an empty
 * queue deletes the lock. Redisson clients ignore ticket messages and still hear {@code 0} when
 * the queue is empty. A release may instead hand the lock over to an owner of its own client that
 * waits for it ({@code lock_hand_over.lua}): the lock never becomes free in between. While
 * Redisson's waiters listen too, a release yields: it frees the lock for them and keeps Relock's
 * attempts off it for a moment ({@code {name}:yield}), or they would never get it.
 */
public class ReentrantDriver extends KeyDriver {

    private final String queue;
    private final String yield;

    public ReentrantDriver(DriverClient runtime, LockKeys keys, String type) {
        super(runtime, keys, type);
        this.queue = keys.ownKey("handoff");
        this.yield = keys.ownKey("yield");
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        return this.<Long>eval(request, Script.LOCK_ACQUIRE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), queue, yield}, request.lease(), request.field(), request.countsForgottenHold(),
                request.countBefore(), Long.toString(request.ticket()), Long.toString(request.queuedTicket()))
                .thenApply(Attempt::fromTtl);
    }

    @Override
    public CompletableFuture<HandedOver> handOver(String from, String to, long leaseMillis, long toTicket,
            boolean countOthers, Budget budget) {
        return runtime.gateway().<List<Object>>eval(Script.LOCK_HAND_OVER, ScriptOutputType.MULTI, budget, false,
                new String[] {keys.key(), queue, keys.channel()}, from, to, Long.toString(leaseMillis),
                Long.toString(toTicket), countOthers ? "1" : "0").thenApply(HandedOver::of);
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        // The release of the last hold the client knows of sends the field alone: both the lease
        // and the count after it are '0' (see lock_release.lua), and every argument costs Redis.
        int holds = request.holdsBefore();
        return eval(request, Script.LOCK_RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel(), queue, yield}, request.field(),
                holds == 1 ? "0" : request.lease(), Integer.toString(holds - 1), UnlockChannels.UNLOCK_MESSAGE);
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        return runtime.gateway().eval(Script.LOCK_ROLLBACK, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel(), queue, yield}, field, Integer.toString(countBefore),
                UnlockChannels.UNLOCK_MESSAGE);
    }

    @Override
    public boolean takesTurns() {
        return true;
    }

    @Override
    public CompletableFuture<?> abandon(String field, long ticket) {
        if (ticket == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return runtime.gateway().eval(Script.LOCK_LEAVE, ScriptOutputType.INTEGER,
                new String[] {keys.key(), keys.channel(), queue, yield}, field, Long.toString(ticket),
                UnlockChannels.UNLOCK_MESSAGE);
    }

    @Override
    public CompletableFuture<Integer> holdCount(String field) {
        return hashCount(field);
    }

    @Override
    public Renewal renewal() {
        return Script.LOCK_RENEW;
    }

    @Override
    public boolean keepsMinimumHold() {
        return true;
    }

    @Override
    public CompletableFuture<Long> keep(String field, long keepMillis) {
        return keepIn(field, keepMillis, "hash");
    }
}
