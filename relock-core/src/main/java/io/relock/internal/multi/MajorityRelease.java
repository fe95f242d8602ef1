package io.relock.internal.multi;

import io.relock.internal.engine.LockEngine;
import io.relock.internal.support.Exceptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One RedLock unlock: the members' first answers, decided as soon as a majority released. Fails,
 * once every member answered, when fewer than a majority released: with the first member's
 * failure if one failed, else with {@link IllegalMonitorStateException} (the lock was lost, or
 * never held by this owner).
 */
final class MajorityRelease {

    /** Completes once a majority released; exceptionally once that can no longer happen. */
    final CompletableFuture<Void> result = new CompletableFuture<>();

    private final String name;
    private final int members;
    private final int quorum;
    private final long owner;
    /** Runs once, when the unlock is decided either way: the hold is over for this client. */
    private final Runnable decided;
    private int released; // guarded by this
    private int answered; // guarded by this
    private final List<IllegalMonitorStateException> refusals = new ArrayList<>(); // guarded by this
    private RuntimeException failure; // guarded by this

    MajorityRelease(String name, int members, int quorum, long owner, Runnable decided) {
        this.name = name;
        this.members = members;
        this.quorum = quorum;
        this.owner = owner;
        this.decided = decided;
    }

    /**
     * A member whose acquire was never sent: nothing to release there, and nothing confirmed
     * either, so it does not count towards the majority (the acquire won a majority of
     * members that did answer, and those are released).
     */
    void skipped() {
        answered(null, null, true);
    }

    /** A member's first release answered: released ({@code error} null), refused, or failed. */
    void answered(LockEngine member, Throwable error) {
        answered(member, error, false);
    }

    private void answered(LockEngine member, Throwable error, boolean skipped) {
        Throwable cause = error == null ? null : Exceptions.unwrap(error);
        boolean majority = false; // this answer made the majority
        boolean all;
        synchronized (this) {
            answered++;
            if (!skipped && cause == null) {
                majority = ++released == quorum;
            } else if (cause instanceof IllegalMonitorStateException refusal) {
                refusals.add(refusal);
            } else if (cause != null && failure == null) {
                failure = Exceptions.translate("unlock " + member.getName(), cause);
            }
            all = answered == members && released < quorum;
        }
        if (majority) {
            decided.run();
            result.complete(null);
        } else if (all) {
            decided.run();
            result.completeExceptionally(refused());
        }
    }

    private synchronized RuntimeException refused() {
        if (failure != null) {
            return Exceptions.translate("unlock " + name, failure);
        }
        IllegalMonitorStateException refused = new IllegalMonitorStateException("cannot unlock " + name
                + " for owner " + owner + ": only " + released + " of " + members
                + " nodes still held it (" + quorum + " needed)"
                + (refusals.isEmpty() ? "" : "; first refusal: " + refusals.get(0).getMessage()));
        refusals.forEach(refused::addSuppressed);
        return refused;
    }
}
