package io.relock;

import java.util.Optional;

/**
 * Leader election among the clients that run for the same name: at most one of them leads at a
 * time, and a leader that stops (crashes, is paused, loses Redis, closes) is replaced.
 *
 * <pre>{@code
 * LeaderElection election = relock.getLeaderElection("billing");
 * election.start(new LeadershipListener() {
 *     public void onElected(Leadership leadership) { billing.startAsLeader(leadership.term()); }
 *     public void onRevoked(Leadership leadership) { billing.stop(); }
 * });
 * ...
 * if (election.isLeader()) { ... }
 * election.close(); // hands leadership over at once
 * }</pre>
 *
 * <p>The election is the {@link FencedLock} of the same name ({@link Relock#getFencedLock}),
 * held by a candidate with the watchdog under an owner id of its own: the client that holds it
 * leads, and the lock's fencing token is the {@linkplain Leadership#term() term}, which grows
 * with every election. A candidate that does not lead waits for the lock; it is elected when
 * the leader releases it (at once: the release wakes it) or when the leader's lease runs out
 * (at most {@link RelockConfig#watchdogTimeout()} after the leader's last renewal).
 *
 * <p><b>A paused leader knows it at once.</b> {@link #isLeader()} is answered from a local lease
 * deadline: the send time of the last renewal that Redis confirmed, plus the lease, on this
 * client's monotonic clock. The lease on Redis began no earlier, so while {@code isLeader()} is
 * true no other client can have been elected (clock rates assumed equal). A leader paused past
 * its lease (a long GC, SIGSTOP) answers {@code false} from the first call after it resumes,
 * before any renewal or message is processed; the term is then over for good (never
 * {@code true} again, even if the lock turns out to be still there: the election releases it
 * and runs again, for a new term) and {@link LeadershipListener#onRevoked} follows on a worker
 * thread.
 *
 * <p><b>Failures.</b> Redis trouble never reaches the caller of {@link #start}: a candidate
 * whose attempt fails logs it (WARN) and tries again after a short delay, for as long as the
 * election is open; a leader whose renewals fail keeps leading until its local lease deadline
 * and is then revoked. {@link #leader()} is a plain read and throws {@link RelockException}.
 * Terms grow as long as Redis keeps the token key; a Redis that loses its data (a restart
 * without persistence, a failover to a replica that had not received it) starts them over, and
 * until the old leader's next renewal finds its lock gone (a third of the watchdog timeout) two
 * clients may lead; use persistence and replica sync where that matters, as for any lock.
 *
 * <p><b>When the process stops.</b> On SIGTERM or {@code System.exit} the client's shutdown hook
 * (on by default, {@link RelockConfig.Builder#releaseOnShutdown(boolean)}) closes every started
 * election, so the leader yields at once and another candidate is elected within milliseconds.
 * After SIGKILL, a crash or a lost machine nothing can yield: the others wait for the leader's
 * lease, at most {@link RelockConfig#watchdogTimeout()} (30 s by default). For elections, give the
 * client a short watchdog timeout, e.g. 5 s to 10 s, so that a dead leader is replaced quickly.
 *
 * <p>Instances are thread-safe. The election uses the client's threads and connections: no
 * thread per election. Closing the client (with {@link Relock#close()}) without closing the
 * election leaves the lock to expire with its lease.
 */
public interface LeaderElection extends AutoCloseable {

    /**
     * The election's name, as passed to {@link Relock#getLeaderElection(String)}.
     *
     * @return the name
     */
    String name();

    /**
     * Runs for leadership, from now until {@link #close()}: in the background, this returns at
     * once. The listener hears of every term this client leads.
     *
     * @param listener told of elections and revocations; see {@link LeadershipListener}
     * @throws NullPointerException if {@code listener} is null
     * @throws IllegalStateException if the election was started before or is closed, or the
     *     client is closed
     */
    void start(LeadershipListener listener);

    /**
     * Whether this client leads now, by its local lease deadline (see the class comment): no
     * round trip, and {@code false} at once after a pause longer than the lease.
     *
     * @return {@code true} if started, elected, and the lease has not run out on this client's
     *     clock
     */
    boolean isLeader();

    /**
     * The term this client leads now, under the same rule as {@link #isLeader()}.
     *
     * @return the current term, or empty if this client does not lead
     */
    Optional<Leadership> currentLeadership();

    /**
     * Who leads now, read from Redis (a few round trips): the holder of the election's lock, its
     * term and where its client runs. Works whether or not this election was started.
     *
     * @return the leader, or empty if nobody leads
     * @throws RelockException if Redis fails
     * @throws IllegalStateException if the client is closed
     */
    Optional<LeaderInfo> leader();

    /**
     * Stops running. If this client leads, it releases the election's lock before returning
     * (waiting at most the command timeout), so another candidate is elected at once rather than
     * after the lease, and {@link LeadershipListener#onRevoked} follows. If Redis cannot be
     * reached, the lock expires with its lease instead; nothing is thrown. Calling it again, or
     * on an election never started, has no effect.
     */
    @Override
    void close();
}
