package io.relock.internal.backend;

/**
 * Whether a write of a lock script survives a failover: what {@code confirmWrite} of the {@link WriteGateway}
 * answers after an acquire, a renewal or a release. All three take this one path and differ
 * only in what they do with the answer.
 *
 * @param outcome what the confirmation found
 * @param acks the replicas that acknowledged, when {@code outcome} is {@link Outcome#TOO_FEW}
 */
public record WriteConfirmation(Outcome outcome, long acks) {

    /** The answer with replica sync off, and when enough replicas acknowledged. */
    public static final WriteConfirmation CONFIRMED = new WriteConfirmation(Outcome.CONFIRMED, 0);

    /** The answer when the connection changed or {@code WAIT} failed on the way. */
    public static final WriteConfirmation UNSURE = new WriteConfirmation(Outcome.UNSURE, 0);

    public enum Outcome {
        /** Replica sync is off, or enough replicas have the write. */
        CONFIRMED,
        /**
         * The connection broke between the write and {@code WAIT} (or {@code WAIT} failed in
         * transit): the server answering now may be a promoted replica that never saw the write.
         * The caller repeats its write there (every script recognises a repeat) and confirms again.
         */
        UNSURE,
        /** The write is on the master, but fewer replicas than required acknowledged in time. */
        TOO_FEW
    }

    public static WriteConfirmation tooFew(long acks) {
        return new WriteConfirmation(Outcome.TOO_FEW, acks);
    }

    public boolean confirmed() {
        return outcome == Outcome.CONFIRMED;
    }

    public boolean unsure() {
        return outcome == Outcome.UNSURE;
    }
}
