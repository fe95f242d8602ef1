package io.relock;

import java.time.Instant;
import java.util.Objects;

/**
 * One term of this client as the leader of a {@link LeaderElection}.
 *
 * @param election the election's name
 * @param term the fencing token of the election's {@link FencedLock} drawn when this term began:
 *     every new term of the election, whichever client wins it, has a larger one (as long as
 *     Redis keeps the token key, see {@link FencedLock}); pass it with every write made as
 *     leader so the resource can refuse a leader that was paused past its lease
 * @param leader where the leading client runs ({@link Relock#clientInfo()})
 * @param since when this client was elected, by its wall clock
 */
public record Leadership(String election, long term, ClientInfo leader, Instant since) {

    /**
     * Creates a term.
     *
     * @param election the election's name
     * @param term the fencing token
     * @param leader the leading client
     * @param since when the term began
     * @throws NullPointerException if {@code election}, {@code leader} or {@code since} is null
     */
    public Leadership {
        Objects.requireNonNull(election, "election must not be null");
        Objects.requireNonNull(leader, "leader must not be null");
        Objects.requireNonNull(since, "since must not be null");
    }
}
