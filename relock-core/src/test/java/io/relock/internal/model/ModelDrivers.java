package io.relock.internal.model;

import io.relock.internal.backend.Budget;
import io.relock.internal.backend.Renewal;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.types.TokenDriver;
import java.util.concurrent.CompletableFuture;

/**
 * The lock drivers of a {@link MemoryStore}: each turns a call into the script call that Redis's
 * driver of the type makes ({@code ReentrantDriver}, {@code FencedDriver}, {@code SimpleDriver}),
 * with the same arguments, and reads the reply as that driver does.
 */
public final class ModelDrivers {

    private ModelDrivers() {}

    /** What the drivers of one lock key share. */
    private abstract static class KeyDriver implements LockDriver {

        final MemoryStore.Connection redis;
        final String key;
        final String channel;
        private final boolean hash;

        KeyDriver(MemoryStore.Connection redis, String key, String channel, boolean hash) {
            this.redis = redis;
            this.key = key;
            this.channel = channel;
            this.hash = hash;
        }

        @Override
        public CompletableFuture<Integer> holdCount(String field) {
            return redis.holdCount(key, field, hash);
        }

        @Override
        public CompletableFuture<Boolean> isLocked() {
            return redis.exists(key);
        }

        @Override
        public CompletableFuture<Long> forceRelease() {
            return redis.forceRelease(key, channel, UnlockChannels.UNLOCK_MESSAGE, hash);
        }

        @Override
        public Renewal renewal() {
            return redis.renewal(hash);
        }

        @Override
        public boolean keepsMinimumHold() {
            return true;
        }

        @Override
        public CompletableFuture<Long> keep(String field, long keepMillis) {
            return redis.keep(key, channel, keepMillis, field, hash, UnlockChannels.UNLOCK_MESSAGE);
        }
    }

    /** The reentrant lock: its waiters take turns. */
    public static class Reentrant extends KeyDriver {

        Reentrant(MemoryStore.Connection redis, String key, String channel) {
            super(redis, key, channel, true);
        }

        @Override
        public String type() {
            return "reentrant";
        }

        @Override
        public CompletableFuture<Attempt> acquire(Request request) {
            return redis.lockAcquire(key, request.leaseMillis(), request.field(),
                    request.countsForgottenHold().equals("1"), request.holdsBefore(), Long.toString(request.ticket()),
                    Long.toString(request.queuedTicket()), request.repeat()).thenApply(Attempt::fromTtl);
        }

        @Override
        public CompletableFuture<Long> release(Request request) {
            // As ReentrantDriver: the last hold the client knows of keeps no lease.
            int holds = request.holdsBefore();
            return redis.lockRelease(key, channel, request.field(), holds == 1 ? 0 : request.leaseMillis(), holds - 1,
                    UnlockChannels.UNLOCK_MESSAGE, request.repeat());
        }

        @Override
        public CompletableFuture<Long> rollback(String field, int countBefore) {
            return redis.lockRollback(key, channel, field, countBefore, UnlockChannels.UNLOCK_MESSAGE);
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
            return redis.lockLeave(key, channel, field, Long.toString(ticket), UnlockChannels.UNLOCK_MESSAGE);
        }

        @Override
        public CompletableFuture<HandedOver> handOver(String from, String to, long leaseMillis, long toTicket,
                boolean countOthers, Budget budget) {
            return redis.lockHandOver(key, from, to, leaseMillis, Long.toString(toTicket)).thenApply(HandedOver::of);
        }
    }

    /** The fenced lock: the reentrant layout and release, an acquire that takes a token, no turns. */
    public static final class Fenced extends Reentrant implements TokenDriver {

        Fenced(MemoryStore.Connection redis, String key, String channel) {
            super(redis, key, channel);
        }

        @Override
        public String type() {
            return "fenced";
        }

        @Override
        public CompletableFuture<Attempt> acquire(Request request) {
            return redis.fencedAcquire(key, request.leaseMillis(), request.field(), request.holdsBefore(),
                    request.takeOver().equals("1"), request.repeat())
                    .thenApply(reply -> reply[0] == 1 ? Attempt.acquired(reply[1]) : Attempt.busy(reply[1]));
        }

        @Override
        public boolean takesTurns() {
            return false;
        }

        @Override
        public CompletableFuture<Long> token() {
            return redis.fencedToken(key);
        }
    }

    /** The simple lock: a string holding the owner's token, not reentrant; no turns. */
    public static final class Simple extends KeyDriver {

        private static final long ALREADY_HELD = -3;

        Simple(MemoryStore.Connection redis, String key, String channel) {
            super(redis, key, channel, false);
        }

        @Override
        public String type() {
            return "simple";
        }

        @Override
        public CompletableFuture<Attempt> acquire(Request request) {
            return redis.simpleAcquire(key, request.leaseMillis(), request.field(), request.repeat()).thenApply(ttl -> {
                if (ttl != null && ttl == ALREADY_HELD) {
                    throw new IllegalMonitorStateException("lock '" + key + "' is not reentrant and is already held by "
                            + request.field());
                }
                return Attempt.fromTtl(ttl);
            });
        }

        @Override
        public CompletableFuture<Long> release(Request request) {
            return redis.simpleRelease(key, channel, UnlockChannels.UNLOCK_MESSAGE, request.field(), request.repeat());
        }

        @Override
        public CompletableFuture<Long> rollback(String field, int countBefore) {
            return redis.simpleRelease(key, channel, UnlockChannels.UNLOCK_MESSAGE, field, false)
                    .thenApply(released -> released == null ? 0L : released);
        }
    }
}
