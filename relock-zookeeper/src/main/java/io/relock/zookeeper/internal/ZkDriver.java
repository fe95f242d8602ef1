package io.relock.zookeeper.internal;

import io.relock.internal.backend.Renewal;
import io.relock.internal.types.TokenDriver;
import java.util.concurrent.CompletableFuture;

/**
 * Every lock type on ZooKeeper's nodes (see {@link ZkLocks}): reentrant, fair, fenced, spin and
 * simple locks are all {@code lock} nodes, and all of them fair, fenced and watching only their
 * predecessor; a simple lock refuses a re-entry. The halves of a read-write lock are
 * {@code read} and {@code write} nodes under the same name.
 */
final class ZkDriver implements TokenDriver {

    private final ZkGateway gateway;
    private final ZkLocks locks;
    private final String name;
    private final String type;
    private final String mode;
    private final boolean reentrant;
    /** The two calls of every cycle, as failures name them: made once, not at every call. */
    private final String acquiring;
    private final String releasing;

    ZkDriver(ZkGateway gateway, ZkLocks locks, String name, String type, String mode, boolean reentrant) {
        this.gateway = gateway;
        this.locks = locks;
        this.name = name;
        this.type = type;
        this.mode = mode;
        this.reentrant = reentrant;
        this.acquiring = "acquire " + noun() + " '" + name + "'";
        this.releasing = "release " + noun() + " '" + name + "'";
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public String noun() {
        return ZkLocks.LOCK.equals(mode) ? "lock" : type + " lock";
    }

    /** A write hold's owner field ends with {@code :write}, as on Redis: the owner may also read. */
    @Override
    public String fieldOf(String ownerField) {
        return ZkLocks.WRITE.equals(mode) ? ownerField + ":" + ZkLocks.WRITE : ownerField;
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        // A re-entry, a waiter whose blocker went, or one still blocked: answered here, on
        // whatever thread asks (a watch's event too), with no hand-over to an operation thread.
        Attempt local;
        try {
            local = locks.acquireLocally(name, request.field(), request.holdsBefore(), reentrant,
                    request.leaseMillis());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (local != null) {
            return CompletableFuture.completedFuture(local);
        }
        return gateway.submitOnCaller(acquiring, request.sole(),
                () -> locks.acquire(name, request.field(), mode, request.holdsBefore(), reentrant,
                        request.leaseMillis()));
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        return gateway.submitOnCaller(releasing, request.sole(),
                () -> locks.release(name, request.field(), request.holdsBefore()));
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        return gateway.submit("undo an acquire of " + noun() + " '" + name + "'",
                () -> locks.rollback(name, field, countBefore));
    }

    @Override
    public CompletableFuture<?> abandon(String field, long ticket) {
        return gateway.submit("leave the waiters of " + noun() + " '" + name + "'", () -> {
            locks.abandon(name, field);
            return null;
        });
    }

    @Override
    public CompletableFuture<Integer> holdCount(String field) {
        return CompletableFuture.completedFuture(locks.holdCount(name, field));
    }

    @Override
    public boolean keepsMinimumHold() {
        return true;
    }

    @Override
    public CompletableFuture<Long> keep(String field, long keepMillis) {
        return CompletableFuture.completedFuture(locks.keep(name, field, keepMillis));
    }

    @Override
    public CompletableFuture<Long> forceRelease() {
        return gateway.submit("force-unlock lock '" + name + "'", () -> locks.forceRelease(name));
    }

    @Override
    public CompletableFuture<Boolean> isLocked() {
        return gateway.submit("read " + noun() + " '" + name + "'", () -> locks.isLocked(name, mode));
    }

    @Override
    public CompletableFuture<Long> token() {
        return gateway.submit("read the fencing token of lock '" + name + "'", () -> locks.token(name));
    }

    @Override
    public Renewal renewal() {
        return ZkGateway.CHECK;
    }
}
