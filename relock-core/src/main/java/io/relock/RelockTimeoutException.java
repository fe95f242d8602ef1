package io.relock;

/**
 * Redis did not answer a command within {@link RelockConfig#commandTimeout()}. When the command
 * was an acquire, Relock cannot know whether it was applied; it has already sent an
 * owner-checked release of that acquire before this exception reaches the caller.
 */
public class RelockTimeoutException extends RelockException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what timed out, on which lock, after how long
     * @param cause the client's timeout exception
     */
    public RelockTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
