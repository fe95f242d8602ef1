package io.relock.internal.backend;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;

/**
 * The gateway of a store whose answer is the write (a committed statement, a quorum's
 * acknowledgement): every write is confirmed as it is answered, there are no replicas to wait
 * for and no slots. Its calls block, so they run on the client's own threads, which this class
 * marks: a call made on one of them never runs on the caller, there being no caller waiting.
 */
public abstract class DurableGateway implements RenewalGateway {

    private static final ThreadLocal<Boolean> INTERNAL = ThreadLocal.withInitial(() -> false);

    /** A thread factory whose threads count as a client's own. */
    public static ThreadFactory internal(ThreadFactory factory) {
        return task -> factory.newThread(() -> {
            INTERNAL.set(true);
            task.run();
        });
    }

    /** Whether the current thread is one of a client's own (see {@link #internal}). */
    protected static boolean onInternalThread() {
        return INTERNAL.get();
    }

    @Override
    public final CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
        return CompletableFuture.completedFuture(WriteConfirmation.CONFIRMED);
    }

    @Override
    public final int replicaSyncMinReplicas() {
        return 0;
    }

    @Override
    public final long replicaSyncTimeoutMillis() {
        return 0;
    }

    @Override
    public final int slotOf(String key) {
        return 0;
    }
}
