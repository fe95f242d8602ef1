package io.relock.internal.lease;

import io.netty.util.Timer;
import io.relock.HeldLock;
import io.relock.RelockException;
import io.relock.WatchdogTickEvent;
import io.relock.internal.backend.Renewal;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.support.Args;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Observers;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this client's holds, and renews those without an explicit lease: one tick every third
 * of the watchdog timeout renews all of them in a few multi-key script calls sent together,
 * not one task per lock. At most one tick's renewals are in flight; a tick that finds the last
 * one still running skips. The timer only sends commands, it never waits for Redis.
 *
 * <p>A hold is lost when a renewal finds it gone (its cause a force-unlock when the renew script
 * finds the note a force-release left for it, else none), when renewals keep failing until
 * its lease would run out before the next tick (its cause the last failure), or when no renewal
 * has been confirmed half a tick before its lease runs out (a renewal that hangs, as on
 * a connection that swallows everything, fails only at the command timeout, which may be later
 * than the lease's end): the holder hears of the loss while the lock is still its own.
 */
public final class Watchdog {

    private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);

    /**
     * Keys per renewal script call: bounds how long one call keeps Redis busy (about 10 ms for
     * 2 500 on the bench machine) while keeping 10 000 locks to four calls per tick.
     */
    static final int BATCH_SIZE = 2500;
    /** A renew script's answer for a hold that a force-release removed lately (see {@code lock_rule.lua}). */
    private static final long FORCED = 2;

    private record HoldKey(String key, String field) {}

    private final Map<HoldKey, Hold> holds = new ConcurrentHashMap<>();
    /** The same holds by lock key, to tell whether another owner of this client holds a lock. */
    private final Map<String, Set<Hold>> byKey = new ConcurrentHashMap<>();
    private final RenewalGateway gateway;
    private final Timer timer;
    private final LongSupplier nanoTime;
    private final long leaseMillis;
    private final long intervalMillis;
    private final BiConsumer<Hold, Throwable> onLost;
    private final Observers observers;
    private final Runnable everyTick;
    private final AtomicBoolean renewing = new AtomicBoolean();
    private volatile boolean stopped;
    /** The tick whose renewals are in flight, or a completed future (see {@link #settled()}). */
    private volatile CompletableFuture<Void> inFlight = CompletableFuture.completedFuture(null);
    /** When the next tick is due, for its lag. */
    private volatile long plannedNanos;

    /**
     * @param onLost told of every hold found lost
     * @param observers told of every tick's outcome
     * @param everyTick run at every tick before the renewals (the client registry's refresh)
     */
    public Watchdog(RenewalGateway gateway, Timer timer, LongSupplier nanoTime, long leaseMillis,
            BiConsumer<Hold, Throwable> onLost, Observers observers, Runnable everyTick) {
        this.gateway = gateway;
        this.timer = timer;
        this.nanoTime = nanoTime;
        this.leaseMillis = leaseMillis;
        this.intervalMillis = Math.max(1, leaseMillis / 3);
        this.onLost = onLost;
        this.observers = observers;
        this.everyTick = everyTick;
    }

    /** What one tick did, counted across its batches. */
    private static final class Tally {
        final AtomicInteger renewed = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger lost = new AtomicInteger();
    }

    public long leaseMillis() {
        return leaseMillis;
    }

    /** The lease an acquire sets on Redis: the one asked for, or the watchdog's for {@link Args#WATCHDOG_LEASE}. */
    public long leaseFor(long requestedLease) {
        return requestedLease == Args.WATCHDOG_LEASE ? leaseMillis : requestedLease;
    }

    public void start() {
        schedule();
    }

    public void stop() {
        stopped = true;
    }

    /**
     * Records an acquire that left the owner with {@code count} holds; {@code requestedLease} is
     * {@link Args#WATCHDOG_LEASE} for renewal. The lease counts from now.
     */
    public Hold acquired(WatchedLock lock, long owner, String field, long requestedLease, int count, String ownerThreadName) {
        return acquired(lock, owner, field, requestedLease, count, ownerThreadName, nanoTime.getAsLong(), null);
    }

    /**
     * Records an acquire sent at {@code sentNanos} (when its lease started at the earliest); a
     * non-null {@code pending}, when the owner is told before Redis answered, settles once that
     * acquire's write is answered (see {@link Hold#pending}): its renewals wait for it.
     */
    public Hold acquired(WatchedLock lock, long owner, String field, long requestedLease, int count, String ownerThreadName,
            long sentNanos, CompletableFuture<Void> pending) {
        boolean watchdog = requestedLease == Args.WATCHDOG_LEASE;
        long lease = leaseFor(requestedLease);
        Hold hold = holds.compute(new HoldKey(lock.key(), field), (key, previous) -> {
            // A re-entry keeps the watchdog if any acquire of this hold asked for it, as Redisson does.
            if (previous != null && !previous.lost && previous.watchdog) {
                return previous;
            }
            Hold fresh = new Hold(lock, owner, field, lease, watchdog, ownerThreadName, sentNanos,
                    nanoTime.getAsLong());
            fresh.pending = pending;
            byKey.compute(lock.key(), (k, ofKey) -> {
                Set<Hold> holdsOfKey = ofKey != null ? ofKey : ConcurrentHashMap.newKeySet();
                if (previous != null) {
                    holdsOfKey.remove(previous);
                }
                holdsOfKey.add(fresh);
                return holdsOfKey;
            });
            return fresh;
        });
        hold.count = count;
        return hold;
    }

    public Hold get(WatchedLock lock, long owner) {
        return holds.get(new HoldKey(lock.key(), lock.fieldOf(owner)));
    }

    /** The hold of owner field {@code field} on {@code key}, or null. */
    public Hold get(String key, String field) {
        return holds.get(new HoldKey(key, field));
    }

    /** Whether an owner of this client holds {@code key} and has not lost it. */
    public boolean holds(String key) {
        Set<Hold> ofKey = byKey.get(key);
        if (ofKey == null) {
            return false;
        }
        for (Hold hold : ofKey) {
            if (!hold.lost && hold.count > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The shortest lease surely left (in ms, by this client's clock) of the holds of {@code key}
     * that owners other than {@code field} have and have not lost, or -1 when there are none.
     */
    public long heldByOthers(String key, String field) {
        Set<Hold> ofKey = byKey.get(key);
        if (ofKey == null) {
            return -1;
        }
        long now = nanoTime.getAsLong();
        long shortest = -1;
        for (Hold hold : ofKey) {
            if (!hold.lost && hold.count > 0 && !hold.field.equals(field)) {
                long left = Math.max(0, hold.leaseLeftMillis(now));
                shortest = shortest < 0 ? left : Math.min(shortest, left);
            }
        }
        return shortest;
    }

    /** Whether {@code hold} is still the one recorded for its lock and owner (not forgotten, not replaced). */
    private boolean isCurrent(Hold hold) {
        return holds.get(new HoldKey(hold.lock.key(), hold.field)) == hold;
    }

    public void forget(Hold hold) {
        if (holds.remove(new HoldKey(hold.lock.key(), hold.field), hold)) {
            byKey.computeIfPresent(hold.lock.key(), (key, ofKey) -> {
                ofKey.remove(hold);
                return ofKey.isEmpty() ? null : ofKey;
            });
        }
    }

    /**
     * Completes once the renewals in flight now are answered: a hold {@linkplain #forget forgotten}
     * before this call is renewed by no write that reaches Redis after it completes. Never fails.
     */
    public CompletableFuture<Void> settled() {
        return inFlight;
    }

    public int size() {
        return holds.size();
    }

    /** Every hold recorded now, lost or not, in no order: a snapshot. */
    public List<Hold> holds() {
        return new ArrayList<>(holds.values());
    }

    /** The holds not lost and not run out, oldest first. */
    public List<HeldLock> held() {
        long now = nanoTime.getAsLong();
        List<Hold> oldestFirst = new ArrayList<>(holds.values());
        // By the monotonic clock: two holds taken in one millisecond keep their order.
        oldestFirst.sort(Comparator.comparingLong(hold -> hold.acquiredAtNanos - now));
        List<HeldLock> held = new ArrayList<>();
        for (Hold hold : oldestFirst) {
            long left = hold.leaseMillis - TimeUnit.NANOSECONDS.toMillis(now - hold.renewedAtNanos);
            if (!hold.lost && left > 0 && hold.count > 0) {
                held.add(new HeldLock(hold.lock.getName(), hold.lock.type(), hold.owner, hold.ownerThreadName,
                        hold.count, Instant.ofEpochMilli(hold.acquiredAtMillis), left, hold.watchdog));
            }
        }
        return held;
    }

    private void schedule() {
        if (!stopped) {
            plannedNanos = nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(intervalMillis);
            timer.newTimeout(timeout -> tick(), intervalMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void tick() {
        long lagNanos = Math.max(0, nanoTime.getAsLong() - plannedNanos);
        try {
            if (!stopped) {
                everyTick.run();
            }
            if (!stopped) {
                watchDeadlines();
            }
            if (!stopped && renewing.compareAndSet(false, true)) {
                Tally tally = new Tally();
                CompletableFuture<Void> done = new CompletableFuture<>();
                inFlight = done;
                CompletableFuture<Void> renewals;
                try {
                    renewals = renewAll(tally);
                } catch (RuntimeException e) {
                    // Settled all the same, or the next ticks and a waiting settled() would hang.
                    LOG.warn("watchdog tick failed; the next tick tries again", e);
                    renewals = CompletableFuture.completedFuture(null);
                }
                renewals.whenComplete((ignored, error) -> {
                    renewing.set(false);
                    done.complete(null);
                    if (observers.any()) {
                        observers.ticked(new WatchdogTickEvent(tally.renewed.get(), tally.failed.get(),
                                tally.lost.get(), lagNanos));
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("watchdog tick failed; the next tick tries again", e);
        } finally {
            schedule();
        }
    }

    /**
     * Schedules, for each renewed hold whose lease runs out soon after the next tick, a check
     * half a tick before the lease's end that gives the hold up unless a renewal was
     * confirmed meanwhile.
     * A lease already past is left to the renewal's answer (after a pause of this JVM, the
     * renewal says whether the lock is still there).
     */
    private void watchDeadlines() {
        long now = nanoTime.getAsLong();
        long intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMillis);
        for (Hold hold : holds.values()) {
            if (!hold.watchdog || hold.lost || hold.writePending()) {
                continue;
            }
            long renewedAt = hold.renewedAtNanos;
            long end = renewedAt + TimeUnit.MILLISECONDS.toNanos(hold.leaseMillis);
            long giveUpAt = end - intervalNanos / 2;
            // Scheduled at the last tick before the moment; a lease already past by this clock is left to the renewal.
            if (giveUpAt - now <= intervalNanos && end - now > 0) {
                timer.newTimeout(timeout -> giveUpIfNotRenewed(hold, renewedAt), Math.max(0, giveUpAt - now),
                        TimeUnit.NANOSECONDS);
            }
        }
    }

    private void giveUpIfNotRenewed(Hold hold, long renewedAt) {
        if (!stopped && hold.renewedAtNanos == renewedAt && hold.releasing.get() == 0 && isCurrent(hold)) {
            markLost(hold, new RelockException("lock '" + hold.lock.getName() + "' was not renewed in time: no renewal"
                    + " was confirmed in the " + TimeUnit.NANOSECONDS.toMillis(nanoTime.getAsLong() - renewedAt)
                    + " ms of its " + hold.leaseMillis + " ms lease, which runs out before the next could be; another"
                    + " client may take the lock then"), null);
        }
    }

    private CompletableFuture<Void> renewAll(Tally tally) {
        List<Hold> due = new ArrayList<>();
        long now = nanoTime.getAsLong();
        for (Hold hold : holds.values()) {
            if (hold.watchdog && !hold.lost) {
                // A hold whose making write is still on its way is renewed at the next tick, so
                // the renewal cannot reach Redis before the hold is there.
                if (!hold.writePending()) {
                    due.add(hold);
                }
            } else if (!hold.lost
                    && TimeUnit.NANOSECONDS.toMillis(now - hold.renewedAtNanos) > hold.leaseMillis + leaseMillis) {
                // A fixed lease that ran out and nobody unlocked: kept for one more watchdog
                // timeout so a late unlock() can still say why, then forgotten. A lost hold stays
                // until its owner unlocks or acquires again, so that unlock() says "lost".
                forget(hold);
            }
        }
        // One script call may only touch keys of one hash slot in a cluster; elsewhere every
        // key shares slot 0 and a call carries up to BATCH_SIZE of them.
        record Group(Renewal renewal, int slot) {}
        Map<Group, List<Hold>> groups = new java.util.HashMap<>();
        for (Hold hold : due) {
            Group group = new Group(hold.lock.renewal(), gateway.slotOf(hold.lock.key()));
            groups.computeIfAbsent(group, g -> new ArrayList<>()).add(hold);
        }
        List<CompletableFuture<?>> batches = new ArrayList<>();
        groups.forEach((group, holdsOfGroup) -> {
            for (int from = 0; from < holdsOfGroup.size(); from += BATCH_SIZE) {
                batches.add(renew(group.renewal(),
                        holdsOfGroup.subList(from, Math.min(holdsOfGroup.size(), from + BATCH_SIZE)), tally));
            }
        });
        return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> renew(Renewal renewal, List<Hold> batch, Tally tally) {
        String[] keys = new String[batch.size()];
        String[] args = new String[batch.size() + 1];
        args[0] = Long.toString(leaseMillis);
        for (int i = 0; i < keys.length; i++) {
            keys[i] = batch.get(i).lock.key();
            args[i + 1] = batch.get(i).field;
        }
        long sentAt = nanoTime.getAsLong();
        long epoch = gateway.connectionEpoch();
        CompletableFuture<List<Object>> reply;
        try {
            reply = gateway.renew(renewal, keys, args);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.thenCompose(renewed -> gateway.confirmWrite(keys[0], epoch).thenApply(confirmation -> {
            List<Hold> unconfirmed = new ArrayList<>();
            for (int i = 0; i < keys.length; i++) {
                Hold hold = batch.get(i);
                long answer = ((Number) renewed.get(i)).longValue();
                if (answer != 1) {
                    if (hold.releasing.get() == 0 && isCurrent(hold)) {
                        markLost(hold, answer == FORCED ? Exceptions.forceUnlocked(hold.lock.getName(), hold.field)
                                : null, tally);
                    }
                } else if (confirmation.confirmed()) {
                    hold.renewedAtNanos = sentAt;
                    tally.renewed.incrementAndGet();
                } else {
                    unconfirmed.add(hold);
                }
            }
            if (!unconfirmed.isEmpty()) {
                // Tried again at the next tick, on whatever connection is up then.
                renewalFailed(unconfirmed, new RelockException(confirmation.unsure()
                        ? "renewed, but the connection was re-established before replicas acknowledged"
                        : "renewed on the master, but only " + confirmation.acks() + " of "
                                + gateway.replicaSyncMinReplicas() + " replicas acknowledged within "
                                + gateway.replicaSyncTimeoutMillis() + " ms"), tally);
            }
            return (Void) null;
        })).exceptionally(error -> {
            renewalFailed(batch, error, tally);
            return null;
        });
    }

    private void renewalFailed(List<Hold> batch, Throwable error, Tally tally) {
        long now = nanoTime.getAsLong();
        for (Hold hold : batch) {
            long sinceRenewal = TimeUnit.NANOSECONDS.toMillis(now - hold.renewedAtNanos);
            // Lost once the lease would run out before the next tick could try again.
            if (sinceRenewal + intervalMillis >= hold.leaseMillis) {
                markLost(hold, Exceptions.unwrap(error), tally);
            } else {
                tally.failed.incrementAndGet();
                LOG.debug("renewal of lock '{}' failed, retrying at the next tick: {}", hold.lock.getName(),
                        Exceptions.unwrap(error).toString());
            }
        }
    }

    /**
     * Marks a hold lost outside a tick: the write that made it failed (see {@link Hold#pending}).
     * Listeners are told once; a hold already forgotten or replaced is left alone.
     */
    public void lost(Hold hold, Throwable cause) {
        if (isCurrent(hold)) {
            markLost(hold, cause, null);
        }
    }

    private void markLost(Hold hold, Throwable cause, Tally tally) {
        // A renewal's answer and the deadline check may both find the hold lost, on different threads: told once.
        synchronized (hold) {
            if (hold.lost) {
                return;
            }
            hold.lossCause = cause;
            hold.renewedAtNanos = nanoTime.getAsLong();
            hold.lost = true;
        }
        if (tally != null) {
            tally.lost.incrementAndGet();
        }
        onLost.accept(hold, cause);
    }
}
