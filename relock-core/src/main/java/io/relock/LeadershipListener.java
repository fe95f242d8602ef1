package io.relock;

/**
 * Told when this client becomes the leader of a {@link LeaderElection} and when it stops being
 * it. For one election the calls come in order, one at a time, never concurrently: every
 * {@link #onElected} is followed by exactly one {@link #onRevoked} for the same
 * {@link Leadership} before the next {@code onElected}.
 *
 * <p>Calls run on one of the client's worker threads (never an I/O or timer thread), so a
 * listener may block briefly, but the next event of the election waits for it. An exception
 * thrown by a listener is logged and changes nothing: the election goes on, and the leadership
 * the call was about is neither given up nor kept because of it.
 */
public interface LeadershipListener {

    /**
     * This client was elected: from now until {@link #onRevoked} it leads, as far as
     * {@link LeaderElection#isLeader()} can tell. Use {@link Leadership#term()} as the fencing
     * token of the writes made as leader.
     *
     * @param leadership the term that began
     */
    void onElected(Leadership leadership);

    /**
     * This client no longer leads in the given term: the lease was lost (it ran out on this
     * client's clock, a renewal found it gone, Redis was unreachable for a whole lease) or the
     * election was closed. Another client may already lead; stop acting as leader.
     *
     * @param leadership the term that ended
     */
    void onRevoked(Leadership leadership);
}
