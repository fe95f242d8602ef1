package io.relock.internal.leader;

import io.relock.ClientInfo;
import io.relock.FencedLock;
import io.relock.HeldLock;
import io.relock.LeaderElection;
import io.relock.LeaderInfo;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.LockInfo;
import io.relock.LockListener;
import io.relock.LockLostEvent;
import io.relock.internal.Client;
import io.relock.internal.support.OwnerIds;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaderElection} on the fenced lock of its name. Candidates run one async acquire at a
 * time under a fresh owner id, so a late event of an old term can never be taken for the current
 * one. State changes under this object's monitor; every campaign step and every listener call
 * runs on one {@link SerialExecutor}, so listeners hear of terms in order.
 */
public final class FencedLeaderElection implements LeaderElection, Client.Closing {

    private static final Logger LOG = LoggerFactory.getLogger(FencedLeaderElection.class);
    /** Pause before another attempt after Redis failed one: a refused connection fails at once. */
    private static final long RETRY_DELAY_MILLIS = 100;

    private final Client runtime;
    private final String name;
    private final FencedLock lock;
    private final ScheduledExecutorService workers;
    private final SerialExecutor serial;
    private final long candidateWaitMillis;
    private final long closeWaitMillis;
    private final LockListener lossListener = this::lost;

    private LeadershipListener listener; // guarded by this
    private boolean started; // guarded by this
    private boolean closed; // guarded by this
    private boolean campaigning; // an acquire or a retry is under way; guarded by this
    private boolean failing; // the last attempt failed: later failures log at DEBUG; guarded by this
    private volatile Term current;

    /** One term of this client: the owner id that holds the lock for it, and whether it is over. */
    private static final class Term {
        final long owner;
        final Leadership leadership;
        /** Set once, never cleared: a term that was seen to end stays ended. */
        volatile boolean over;

        Term(long owner, Leadership leadership) {
            this.owner = owner;
            this.leadership = leadership;
        }
    }

    /** An election named {@code name} on {@code lock}, the fenced lock of that name on {@code runtime}. */
    public FencedLeaderElection(Client runtime, String name, FencedLock lock) {
        this.runtime = runtime;
        this.name = name;
        this.lock = lock;
        this.workers = runtime.workers();
        this.serial = new SerialExecutor(workers);
        this.candidateWaitMillis = runtime.config().watchdogTimeout().toMillis();
        this.closeWaitMillis = runtime.config().commandTimeout().toMillis() + 500;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void start(LeadershipListener listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("leader election '" + name + "' is closed");
            }
            if (started) {
                throw new IllegalStateException("leader election '" + name + "' is started already");
            }
            runtime.checkOpen();
            this.listener = listener;
            started = true;
            // Under the monitor: a close() after it removes it again.
            runtime.addElection(this);
        }
        runtime.addListener(lossListener);
        serial.execute(this::campaign);
    }

    @Override
    public boolean isLeader() {
        Term term = current;
        return term != null && valid(term);
    }

    @Override
    public Optional<Leadership> currentLeadership() {
        Term term = current;
        return term != null && valid(term) ? Optional.of(term.leadership) : Optional.empty();
    }

    @Override
    public Optional<LeaderInfo> leader() {
        runtime.checkOpen();
        // Token, holder, token: equal tokens mean the holder read between them is that term's.
        for (int attempt = 0; attempt < 3; attempt++) {
            Long before = lock.getToken();
            LockInfo info = runtime.lockInfo(name);
            Long after = lock.getToken();
            if (info.holders().isEmpty() || after == null) {
                return Optional.empty();
            }
            if (after.equals(before)) {
                String holder = info.holders().keySet().iterator().next();
                int colon = holder.indexOf(':');
                String clientId = colon < 0 ? holder : holder.substring(0, colon);
                return Optional.of(new LeaderInfo(name, after, clientId, info.clientOf(holder)));
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        try {
            closeAsync().get(closeWaitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("leader election '{}' closed without releasing; its lease runs out instead", name, e);
        }
    }

    /** Closes without waiting: the stage completes (never exceptionally) once the release is answered. */
    @Override
    public CompletableFuture<Void> closeAsync() {
        Term term;
        boolean wasStarted;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.completedFuture(null);
            }
            closed = true;
            wasStarted = started;
            term = current;
            current = null;
        }
        if (wasStarted) {
            runtime.removeListener(lossListener);
            runtime.removeElection(this);
        }
        if (term == null) {
            return CompletableFuture.completedFuture(null);
        }
        term.over = true;
        serial.execute(() -> tell(LeadershipListener::onRevoked, term.leadership));
        LOG.info("leader election '{}' closed: yielding term {}", name, term.leadership.term());
        return release(term.owner);
    }

    /** Whether the term still holds by the local lease deadline; ends it for good when not. */
    private boolean valid(Term term) {
        if (term.over) {
            return false;
        }
        if (heldNow(term.owner)) {
            return true;
        }
        term.over = true;
        serial.execute(() -> revoke(term, "its lease ran out on this client's clock"));
        return false;
    }

    /** The client's own record: held, not lost, and the last confirmed renewal plus the lease is ahead. */
    private boolean heldNow(long owner) {
        for (HeldLock held : runtime.heldLocks()) {
            if (held.ownerId() == owner && held.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    // ---- on the serial executor ------------------------------------------------------------

    private void campaign() {
        long owner;
        synchronized (this) {
            if (closed || campaigning || current != null) {
                return;
            }
            campaigning = true;
            owner = OwnerIds.next();
        }
        CompletableFuture<Boolean> attempt;
        try {
            attempt = lock.tryLockAsync(candidateWaitMillis, -1, TimeUnit.MILLISECONDS, owner).toCompletableFuture();
        } catch (RuntimeException e) {
            attempt = CompletableFuture.failedFuture(e);
        }
        attempt.whenComplete((acquired, error) -> serial.execute(() -> attempted(owner, acquired, error)));
    }

    private void attempted(long owner, Boolean acquired, Throwable error) {
        synchronized (this) {
            campaigning = false;
            if (closed) {
                if (error == null && acquired) {
                    release(owner);
                }
                return;
            }
        }
        if (error != null) {
            failed("could not run for leadership", error);
            return;
        }
        if (!acquired) {
            campaign();
            return;
        }
        Long token;
        try {
            // A worker thread may wait for this one reply; nothing else of this election runs meanwhile.
            token = lock.getToken();
        } catch (RuntimeException e) {
            release(owner);
            failed("could not read the term", e);
            return;
        }
        // Still held by the local deadline after the read: nobody else can have drawn a token before it.
        if (token == null || !heldNow(owner)) {
            release(owner).whenComplete((ignored, e) -> serial.execute(this::campaign));
            return;
        }
        ClientInfo self = runtime.self();
        Term term = new Term(owner, new Leadership(name, token, self, Instant.now()));
        synchronized (this) {
            failing = false;
            if (closed) {
                release(owner);
                return;
            }
            current = term;
        }
        LOG.info("elected leader of '{}' in term {}", name, token);
        tell(LeadershipListener::onElected, term.leadership);
    }

    private void failed(String what, Throwable error) {
        boolean first;
        synchronized (this) {
            first = !failing;
            failing = true;
            campaigning = true; // until the retry, no other attempt starts
        }
        if (first) {
            LOG.warn("leader election '{}' {}; retrying every {} ms: {}", name, what, RETRY_DELAY_MILLIS, error.toString());
        } else {
            LOG.debug("leader election '{}' {}: {}", name, what, error.toString());
        }
        try {
            workers.schedule(() -> serial.execute(this::retry), RETRY_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            LOG.debug("leader election '{}' stops: the client's threads are gone", name);
        }
    }

    private void retry() {
        synchronized (this) {
            campaigning = false;
        }
        campaign();
    }

    private void lost(LockLostEvent event) {
        Term term = current;
        if (term != null && term.owner == event.ownerThreadId() && name.equals(event.lockName())) {
            term.over = true;
            serial.execute(() -> revoke(term, "its lock was lost"));
        }
    }

    private void revoke(Term term, String why) {
        synchronized (this) {
            if (current != term) {
                return;
            }
            current = null;
        }
        term.over = true;
        LOG.warn("leadership of '{}' in term {} ended: {}", name, term.leadership.term(), why);
        tell(LeadershipListener::onRevoked, term.leadership);
        release(term.owner).whenComplete((ignored, error) -> serial.execute(this::campaign));
    }

    /** Releases a candidate's or a term's hold; a hold already lost only clears the client's record of it. */
    private CompletableFuture<Void> release(long owner) {
        CompletableFuture<Void> released;
        try {
            released = lock.unlockAsync(owner).toCompletableFuture();
        } catch (RuntimeException e) {
            released = CompletableFuture.failedFuture(e);
        }
        return released.handle((ignored, error) -> {
            if (error != null) {
                LOG.debug("leader election '{}': release of owner {}: {}", name, owner, error.toString());
            }
            return null;
        });
    }

    private void tell(BiConsumer<LeadershipListener, Leadership> event, Leadership leadership) {
        LeadershipListener target;
        synchronized (this) {
            target = listener;
        }
        try {
            event.accept(target, leadership);
        } catch (RuntimeException e) {
            LOG.error("LeadershipListener {} failed for '{}' term {}", target, name, leadership.term(), e);
        }
    }

    @Override
    public String toString() {
        Term term = current;
        return "LeaderElection{name=" + name + (term != null && !term.over ? ", leader in term " + term.leadership.term() : "")
                + "}";
    }
}
