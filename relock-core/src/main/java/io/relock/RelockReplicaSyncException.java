package io.relock;

/**
 * An acquire reached the master but fewer replicas than {@link RelockConfig.Builder#replicaSync}
 * asks for acknowledged it in time. Relock has already released that acquire (owner-checked)
 * when the caller sees this, so nothing is held; retrying is safe. Frequent failures mean the
 * replicas are down, paused or lagging.
 */
public class RelockReplicaSyncException extends RelockException {

    private static final long serialVersionUID = 1L;

    /** How many replicas acknowledged the acquire in time. */
    private final int acknowledged;
    /** How many replicas the configuration requires. */
    private final int required;

    /**
     * Creates the exception.
     *
     * @param message which lock, and what was done about it
     * @param acknowledged how many replicas acknowledged
     * @param required how many were required
     */
    public RelockReplicaSyncException(String message, int acknowledged, int required) {
        super(message);
        this.acknowledged = acknowledged;
        this.required = required;
    }

    /**
     * How many replicas acknowledged the acquire within the replica-sync timeout.
     *
     * @return the count, at least 0
     */
    public int acknowledged() {
        return acknowledged;
    }

    /**
     * How many replicas the configuration requires.
     *
     * @return the configured minimum
     */
    public int required() {
        return required;
    }
}
