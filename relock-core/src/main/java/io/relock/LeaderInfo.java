package io.relock;

import java.util.Objects;
import java.util.Optional;

/**
 * Who leads an election, as Redis says, from {@link LeaderElection#leader()}; any client can
 * ask, whether it runs for the election or not. A snapshot: it can be stale when it is read.
 *
 * @param election the election's name
 * @param term the leader's term (the fencing token it was elected with)
 * @param clientId the leading client's id ({@link Relock#clientId()})
 * @param client where the leading client runs, if it is a registered Relock client (see
 *     {@link ClientInfo}); empty if its registry entry is gone (for example just after a Redis
 *     restart, until its next watchdog tick writes it again)
 */
public record LeaderInfo(String election, long term, String clientId, Optional<ClientInfo> client) {

    /**
     * Creates a snapshot.
     *
     * @param election the election's name
     * @param term the leader's term
     * @param clientId the leading client's id
     * @param client where it runs, or empty
     * @throws NullPointerException if any argument is null
     */
    public LeaderInfo {
        Objects.requireNonNull(election, "election must not be null");
        Objects.requireNonNull(clientId, "clientId must not be null");
        Objects.requireNonNull(client, "client must not be null");
    }
}
