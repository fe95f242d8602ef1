package io.relock.spring;

import io.relock.Leadership;

/**
 * This application no longer leads an election in the given term
 * ({@link io.relock.LeadershipListener#onRevoked}): its lease was lost, or the context is
 * closing. Another instance may already lead. Like Spring Integration's {@code OnRevokedEvent}.
 */
public class LeadershipRevokedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the event.
     *
     * @param source the {@link RelockLeadership} that publishes it
     * @param leadership the term that ended
     */
    public LeadershipRevokedEvent(Object source, Leadership leadership) {
        super(source, leadership);
    }
}
