package io.relock;

/**
 * Redis could not be reached, or the connection broke while a command was in flight.
 * Thrown by {@link Relock#create(RelockConfig)} when the server is unreachable or rejects the
 * credentials, and by lock operations when the connection is lost.
 */
public class RelockConnectionException extends RelockException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what Relock was doing
     * @param cause the client's connection failure
     */
    public RelockConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
