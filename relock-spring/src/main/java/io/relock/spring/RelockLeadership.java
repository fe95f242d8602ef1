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
 * method and every name of {@link RelockConfigurer#leaderElectionNames()} ({@code relock.leader-election.names}
 * in Spring Boot). A bean of {@link EnableRelock} and of the starter.
 *
 * <p>The elections start when the context is ready (this is a {@link SmartLifecycle} in the last
 * phase: after the other beans, the web server included, have started) and are closed first when
 * the context closes. Closing lets the {@link LeaderOnly} calls in progress finish (calls that
 * start meanwhile are skipped; Spring's {@code spring.lifecycle.timeout-per-shutdown-phase}
 * bounds the wait), then the leader releases its election's lock at once, so another instance
 * is elected without waiting for the lease and never runs the job beside this one. A
 * {@link LeaderOnly} method of a bean created after the start runs for its election from its
 * first call on.
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
     * A term counts from the moment the listeners of its {@link LeadershipGrantedEvent} have
     * returned (inside them this is still false: use the event's term), so that they can prepare
     * what the {@link LeaderOnly} methods of the term need, until it is over.
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
        return candidate == null ? Optional.empty() : candidate.current();
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

    /**
     * For {@link LeaderOnly} calls: the election if this application leads it, counting the call
     * as in progress until {@link Candidate#exit()}; null if it does not lead (or is closing). An
     * election nobody ran for yet is started here.
     */
    Candidate enter(String name) {
        Candidate candidate;
        synchronized (this) {
            candidate = candidates.get(name);
            if (candidate == null) {
                if (!running) {
                    return null;
                }
                candidate = run(name);
            }
        }
        return candidate.enter() ? candidate : null;
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

    /**
     * Closes the elections: each one first lets the {@link LeaderOnly} calls in progress finish
     * (new ones are skipped), then hands over at once, and waits until its revoked event is
     * published. {@link #stop(Runnable)}, which Spring calls, does the same on a thread of its
     * own, so that Spring's {@code spring.lifecycle.timeout-per-shutdown-phase} bounds the wait for
     * a long call; after it the context goes on closing, and the lease runs out instead.
     */
    @Override
    public void stop() {
        List<Candidate> closing;
        synchronized (this) {
            running = false;
            closing = new ArrayList<>(candidates.values());
        }
        closing.forEach(Candidate::stopEntering);
        long waitMillis = relock.config().commandTimeout().toMillis() + 1000;
        for (Candidate candidate : closing) {
            // The calls in progress still see their term (leadership(name)) until the election closes.
            candidate.awaitCalls();
            candidate.election.close();
            candidate.awaitRevoked(waitMillis);
            synchronized (this) {
                candidates.remove(candidate.election.name(), candidate);
            }
        }
    }

    @Override
    public void stop(Runnable callback) {
        Thread stopping = new Thread(() -> {
            try {
                stop();
            } finally {
                callback.run();
            }
        }, "relock-leadership-stop");
        stopping.setDaemon(true);
        stopping.start();
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    /**
     * One election this application runs for, its listener, which publishes the events, and the
     * {@link LeaderOnly} calls in progress.
     */
    final class Candidate implements LeadershipListener {

        final LeaderElection election;
        private Leadership granted; // the term granted and not yet revoked; guarded by this
        private int calls; // LeaderOnly calls in progress; guarded by this
        private boolean closing; // guarded by this

        Candidate(LeaderElection election) {
            this.election = election;
        }

        /** The term, from the end of its granted event's publication until the election says it is over. */
        synchronized Optional<Leadership> current() {
            if (granted == null) {
                return Optional.empty();
            }
            Optional<Leadership> now = election.currentLeadership();
            return now.isPresent() && now.get().term() == granted.term() ? now : Optional.empty();
        }

        /** Lets a call in while {@link #current()} has a term and this election is not closing. */
        synchronized boolean enter() {
            if (closing || current().isEmpty()) {
                return false;
            }
            calls++;
            return true;
        }

        /** Ends a call that {@link RelockLeadership#enter} let in. */
        synchronized void exit() {
            calls--;
            if (calls == 0) {
                notifyAll();
            }
        }

        synchronized void stopEntering() {
            closing = true;
        }

        synchronized void awaitCalls() {
            boolean interrupted = false;
            while (calls > 0) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                    break;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void onElected(Leadership leadership) {
            try {
                publisher.publishEvent(new LeadershipGrantedEvent(RelockLeadership.this, leadership));
            } catch (RuntimeException e) {
                LOG.error("a listener of the granted event of '{}' term {} failed", leadership.election(),
                        leadership.term(), e);
            } finally {
                synchronized (this) {
                    granted = leadership;
                }
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
