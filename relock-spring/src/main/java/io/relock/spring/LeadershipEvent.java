package io.relock.spring;

import java.util.Objects;

import org.springframework.context.ApplicationEvent;

import io.relock.Leadership;

/**
 * A change of this application's leadership in one election, published by
 * {@link RelockLeadership}: {@link LeadershipGrantedEvent} or {@link LeadershipRevokedEvent}.
 * For one election the events come in order, one at a time: every granted event is followed
 * by exactly one revoked event for the same term before the next granted one. They are
 * published on one of the Relock client's worker threads; the election's next event waits for
 * the listeners, so keep them short (or make them {@code @Async}).
 */
public abstract class LeadershipEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final transient Leadership leadership;

    /**
     * Creates an event.
     *
     * @param source the {@link RelockLeadership} that publishes it
     * @param leadership the term that began or ended
     */
    protected LeadershipEvent(Object source, Leadership leadership) {
        super(source);
        this.leadership = Objects.requireNonNull(leadership, "leadership must not be null");
    }

    /**
     * The election's name.
     *
     * @return the name, as in {@link LeaderOnly} or {@code relock.leader-election.names}
     */
    public String getName() {
        return leadership.election();
    }

    /**
     * The term: the fencing token this application was elected with.
     *
     * @return the term
     */
    public long getTerm() {
        return leadership.term();
    }

    /**
     * The term with the leading client and when it began.
     *
     * @return the leadership
     */
    public Leadership getLeadership() {
        return leadership;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{name=" + getName() + ", term=" + getTerm() + "}";
    }
}
