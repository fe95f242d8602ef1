package io.relock.spring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

import io.relock.LeaderElection;
import io.relock.LeaderInfo;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.Relock;

/**
 * The leader elections this application runs for: every name used by a {@link LeaderOnly}
 * method and every name in {@code relock.leader-election.names}. A bean of the starter.
 *
 * <p>The elections start when the context is ready (this is a {@link SmartLifecycle} in the last
 * phase: after the other beans, the web server included, have started) and are closed first when
 * the context closes: a leader releases its election's lock at once, so another instance is
 * elected without waiting for the lease. A {@link LeaderOnly} method of a bean created after the
 * start runs for its election from its first call on.
 *
 * <p>Each change is published as a Spring application event: {@link LeadershipGrantedEvent} when
 * this application is elected, {@link LeadershipRevokedEvent} when it stops leading (see
 * {@link LeadershipEvent} for their order and thread). Closing the context waits (at most the
 * command timeout plus a second per election) until the revoked event of a term it led has been
 * published.
 *
 * <p>With {@code relock.leader-election.enabled=false} nothing runs: {@link #isLeader} is always
 * false and every {@link LeaderOnly} call is skipped.
 */
public class RelockLeadership implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(RelockLeadership.class);

    private final Relock relock;
    private final ApplicationEventPublisher publisher;
    private final boolean enabled;
    private final SortedSet<String> configuredNames;
    private final Supplier<? extends Collection<String>> annotatedNames;
    private final Map<String, Candidate> candidates = new TreeMap<>(); // guarded by this
    private boolean running; // guarded by this

    RelockLeadership(Relock relock, ApplicationEventPublisher publisher, boolean enabled,
            Collection<String> configuredNames, Supplier<? extends Collection<String>> annotatedNames) {
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.publisher = Objects.requireNonNull(publisher, "publisher must not be null");
        this.enabled = enabled;
        this.configuredNames = new TreeSet<>();
        for (String name : configuredNames) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("relock.leader-election.names must not hold a blank name: "
                        + configuredNames);
            }
            this.configuredNames.add(name.strip());
        }
        this.annotatedNames = Objects.requireNonNull(annotatedNames, "annotatedNames must not be null");
    }

    /**
     * Whether this application leads the election now: answered locally, without a round trip,
     * and false at once after a pause longer than the lease ({@link LeaderElection#isLeader()}).
     *
     * @param name the election's name
     * @return true if this application runs for {@code name} and leads it
     */
    public boolean isLeader(String name) {
        return leadership(name).isPresent();
    }

    /**
     * The term this application leads, under the rule of {@link #isLeader(String)}; its
     * {@linkplain Leadership#term() term} is the fencing token for the writes made as leader.
     *
     * @param name the election's name
     * @return the current term, or empty if this application does not lead {@code name}
     */
    public Optional<Leadership> leadership(String name) {
        Candidate candidate;
        synchronized (this) {
            candidate = candidates.get(name);
        }
        return candidate == null ? Optional.empty() : candidate.election.currentLeadership();
    }

    /**
     * Who leads an election now, read from Redis (a few round trips); any name works, whether
     * this application runs for it or not.
     *
     * @param name the election's name
     * @return the leader, or empty if nobody leads
     * @throws io.relock.RelockException if Redis fails
     */
    public Optional<LeaderInfo> leader(String name) {
        return relock.getLeaderElection(name).leader();
    }

    /**
     * The elections this application runs for, or will run for once the context is ready.
     *
     * @return their names, sorted; empty when {@code relock.leader-election.enabled=false}
     */
    public synchronized SortedSet<String> names() {
        if (!enabled) {
            return Collections.emptySortedSet();
        }
        SortedSet<String> all = new TreeSet<>(configuredNames);
        all.addAll(annotatedNames.get());
        all.addAll(candidates.keySet());
        return Collections.unmodifiableSortedSet(all);
    }

    /** For {@link LeaderOnly} calls: whether this application leads, running for {@code name} from now if it did not. */
    boolean leads(String name) {
        Candidate candidate;
        synchronized (this) {
            candidate = candidates.get(name);
            if (candidate == null) {
                if (!running) {
                    return false;
                }
                candidate = run(name);
            }
        }
        return candidate.election.isLeader();
    }

    @Override
    public synchronized void start() {
        if (running || !enabled) {
            return;
        }
        running = true;
        for (String name : names()) {
            run(name);
        }
        LOG.info("running for leadership of {}", candidates.keySet());
    }

    /** Starts one election; under this object's monitor. */
    private Candidate run(String name) {
        Candidate candidate = new Candidate(relock.getLeaderElection(name));
        candidates.put(name, candidate);
        candidate.election.start(candidate);
        return candidate;
    }

    @Override
    public void stop() {
        List<Candidate> closing;
        synchronized (this) {
            running = false;
            closing = new ArrayList<>(candidates.values());
            candidates.clear();
        }
        long waitMillis = relock.config().commandTimeout().toMillis() + 1000;
        for (Candidate candidate : closing) {
            candidate.election.close();
            candidate.awaitRevoked(waitMillis);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    /** One election this application runs for, and its listener, which publishes the events. */
    private final class Candidate implements LeadershipListener {

        final LeaderElection election;
        private Leadership granted; // the term granted and not yet revoked; guarded by this

        Candidate(LeaderElection election) {
            this.election = election;
        }

        @Override
        public void onElected(Leadership leadership) {
            synchronized (this) {
                granted = leadership;
            }
            try {
                publisher.publishEvent(new LeadershipGrantedEvent(RelockLeadership.this, leadership));
            } catch (RuntimeException e) {
                LOG.error("a listener of the granted event of '{}' term {} failed", leadership.election(),
                        leadership.term(), e);
            }
        }

        @Override
        public void onRevoked(Leadership leadership) {
            try {
                publisher.publishEvent(new LeadershipRevokedEvent(RelockLeadership.this, leadership));
            } catch (RuntimeException e) {
                LOG.error("a listener of the revoked event of '{}' term {} failed", leadership.election(),
                        leadership.term(), e);
            } finally {
                synchronized (this) {
                    granted = null;
                    notifyAll();
                }
            }
        }

        /** Waits, bounded, until the revoked event of the term this candidate led has been published. */
        synchronized void awaitRevoked(long millis) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (granted != null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn("the revoked event of '{}' term {} was not published within {} ms of closing",
                            granted.election(), granted.term(), millis);
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
