package io.relock.jdbc.internal;

import io.relock.internal.backend.Renewal;
import io.relock.internal.types.TokenDriver;
import java.util.concurrent.CompletableFuture;

/**
 * Every lock type on the lease table: one row per name with its owner, hold count, token and
 * expiry. Reentrant, spin and fenced locks count re-entries; a simple lock refuses one. Every
 * hold carries a token, so every type is fenced underneath. Waiters take no turns here: a release
 * frees the row, and the first waiter to ask again gets it.
 */
final class JdbcDriver implements TokenDriver {

    private final JdbcGateway gateway;
    private final String name;
    private final String type;
    private final boolean reentrant;

    JdbcDriver(JdbcGateway gateway, String name, String type, boolean reentrant) {
        this.gateway = gateway;
        this.name = name;
        this.type = type;
        this.reentrant = reentrant;
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public CompletableFuture<Attempt> acquire(Request request) {
        String owner = request.field();
        // A hold the client forgot (see Request.sole) is taken as a new hold, not counted on top.
        boolean countReentry = !"1".equals(request.takeOver());
        return gateway.submitOnCaller("acquire lock '" + name + "'", request.sole(), (c, d) -> {
            Dialect.Acquired acquired = d.acquire(c, name, owner, request.leaseMillis(), reentrant, countReentry);
            if (acquired.acquired()) {
                return Attempt.acquired(acquired.token());
            }
            if (!reentrant && owner.equals(acquired.holder())) {
                throw new IllegalMonitorStateException("lock '" + name + "' is not reentrant and is already held by "
                        + owner);
            }
            return Attempt.busy(acquired.ttlMillis());
        });
    }

    @Override
    public CompletableFuture<Long> release(Request request) {
        return gateway.submitOnCaller("release lock '" + name + "'", request.sole(),
                (c, d) -> d.release(c, name, request.field(), request.holdsBefore()));
    }

    @Override
    public CompletableFuture<Long> rollback(String field, int countBefore) {
        return gateway.submit("undo an acquire of lock '" + name + "'", (c, d) -> d.rollback(c, name, field, countBefore));
    }

    @Override
    public CompletableFuture<Integer> holdCount(String field) {
        return gateway.submit("read the hold count of lock '" + name + "'", (c, d) -> {
            Dialect.Row row = d.read(c, name);
            return row != null && row.owner().equals(field) ? row.holds() : 0;
        });
    }

    @Override
    public boolean keepsMinimumHold() {
        return true;
    }

    @Override
    public CompletableFuture<Long> keep(String field, long keepMillis) {
        return gateway.submit("keep lock '" + name + "'", (c, d) -> d.keep(c, name, field, keepMillis));
    }

    @Override
    public CompletableFuture<Long> forceRelease() {
        return gateway.submit("force-unlock lock '" + name + "'", (c, d) -> d.forceRelease(c, name));
    }

    @Override
    public CompletableFuture<Boolean> isLocked() {
        return gateway.submit("read lock '" + name + "'", (c, d) -> d.read(c, name) != null);
    }

    @Override
    public CompletableFuture<Long> token() {
        return gateway.submit("read the fencing token of lock '" + name + "'", (c, d) -> {
            Dialect.Row row = d.read(c, name);
            return row == null ? null : row.token();
        });
    }

    @Override
    public Renewal renewal() {
        return JdbcGateway.RENEWAL;
    }
}
