package io.relock;

/**
 * Why a hold was lost when a force-unlock removed it ({@link Relock#forceUnlock(String)} or
 * {@link DistributedLock#forceUnlock()}, from any Relock client): the
 * {@linkplain LockLostEvent#cause() cause} of the {@link LockLostEvent} the holder's watchdog
 * reports, and the cause named by the holder's next {@code unlock()}. Never thrown by Relock.
 *
 * <p>The force-unlock leaves a note of the holders it removed next to the lock for one watchdog
 * timeout of the client that forced it; a holder whose watchdog renews within that time learns
 * it was forced. A holder that learns later (a fixed lease without renewal, a watchdog timeout
 * more than three times the forcing client's, a force-unlock by Redisson) sees the lock merely
 * gone ({@code cause} null).
 */
public class LockForceUnlockedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which lock and owner were removed
     */
    public LockForceUnlockedException(String message) {
        super(message);
    }
}
