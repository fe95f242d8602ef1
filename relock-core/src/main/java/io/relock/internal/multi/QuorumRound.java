package io.relock.internal.multi;

import io.relock.RelockException;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.multi.MemberLanes.Kind;
import io.relock.internal.support.Exceptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * One round of a RedLock acquire: one attempt on every member at once, decided as soon as the
 * answers allow. Won when a majority acquired and the lease left after the time spent, minus a
 * clock-drift allowance, is still positive (Redlock's validity); lost when a majority can no
 * longer be reached, or at the deadline. What a lost round won, then or later, is released in
 * the member's lane.
 */
final class QuorumRound {

    /** Completes with whether the round won; exceptionally when no majority could be asked. */
    final CompletableFuture<Boolean> decision = new CompletableFuture<>();

    private final String name;
    private final List<LockEngine> members;
    private final int quorum;
    private final long owner;
    private final long leaseMillis;
    private final LongSupplier clock;
    private final long startNanos;
    private final AtomicInteger acquired = new AtomicInteger();
    private final AtomicInteger busy = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final List<LockEngine> held = new ArrayList<>(); // guarded by this
    private final List<Throwable> errors = new ArrayList<>(); // guarded by this
    private boolean decided; // guarded by this
    private boolean won; // guarded by this

    QuorumRound(String name, List<LockEngine> members, int quorum, long owner, long leaseMillis, LongSupplier clock) {
        this.name = name;
        this.members = members;
        this.quorum = quorum;
        this.owner = owner;
        this.leaseMillis = leaseMillis;
        this.clock = clock;
        this.startNanos = clock.getAsLong();
    }

    /** A member answered its attempt: acquired, busy, or failed ({@code error}). */
    void answered(LockEngine member, LockDriver.Attempt attempt, Throwable error) {
        if (error != null) {
            synchronized (this) {
                errors.add(Exceptions.unwrap(error));
            }
            failed.incrementAndGet();
        } else if (attempt.acquired()) {
            boolean lost;
            synchronized (this) {
                lost = decided && !won;
                if (!lost) {
                    held.add(member);
                }
            }
            if (lost) {
                release(member); // a late "yes" after the round was lost
                return;
            }
            acquired.incrementAndGet();
        } else {
            busy.incrementAndGet();
        }
        evaluate(false);
    }

    /** The round's time is up: decided on the answers in so far. */
    void deadline() {
        evaluate(true);
    }

    /** Gives up (e.g. the caller was interrupted): what was or will be acquired is released. */
    void abandon() {
        decide(false, null);
    }

    private void evaluate(boolean timeUp) {
        int yes = acquired.get();
        int no = busy.get() + failed.get();
        if (yes >= quorum) {
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(clock.getAsLong() - startNanos);
            long lease = members.get(0).client.watchdog().leaseFor(leaseMillis);
            // Redlock's validity: what is left of the lease once the time spent and the
            // possible drift between the nodes' clocks are taken off.
            long drift = lease / 100 + 2;
            decide(lease - elapsedMillis - drift > 0, null);
        } else if (members.size() - no < quorum || timeUp || yes + no == members.size()) {
            decide(false, busy.get() == 0 ? noMajority(yes) : null);
        }
    }

    private RelockException noMajority(int yes) {
        RelockException failure = new RelockException(name + ": no majority of " + members.size()
                + " nodes could be locked (" + yes + " acquired, " + failed.get() + " failed, "
                + (members.size() - yes - busy.get() - failed.get()) + " did not answer in time; "
                + quorum + " needed)");
        synchronized (this) {
            errors.forEach(failure::addSuppressed);
        }
        return failure;
    }

    private void decide(boolean success, RelockException failure) {
        List<LockEngine> toRelease;
        synchronized (this) {
            if (decided) {
                return;
            }
            decided = true;
            won = success;
            toRelease = success ? List.of() : List.copyOf(held);
        }
        toRelease.forEach(this::release);
        if (failure != null) {
            decision.completeExceptionally(failure);
        } else {
            decision.complete(success);
        }
    }

    /** The rollback of a member this round won: in the background, retried (see {@link MemberLanes}). */
    private void release(LockEngine member) {
        MemberLanes.releaseInBackground(member, owner, Kind.ROLLBACK, CompletableFuture.completedFuture(true),
                error -> { }, () -> { });
    }
}
