package io.relock.spring;

import io.relock.Leadership;

/**
 * This application was elected leader of an election ({@link io.relock.LeadershipListener#onElected});
 * from now until the matching {@link LeadershipRevokedEvent} its {@link LeaderOnly} methods run.
 * Like Spring Integration's {@code OnGrantedEvent}.
 */
public class LeadershipGrantedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the event.
     *
     * @param source the {@link RelockLeadership} that publishes it
     * @param leadership the term that began
     */
    public LeadershipGrantedEvent(Object source, Leadership leadership) {
        super(source, leadership);
    }
}
