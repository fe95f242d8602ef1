package io.relock.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The reentrant lock, waiting by capped exponential backoff with jitter instead of pub/sub:
 * no subscriptions at all, for workloads with very many locks and little contention. A waiter
 * notices a release at its next attempt, so hand-offs are slower than with {@code getLock}.
 */
public final class SpinRedisLock extends ReentrantRedisLock {

    private final long initialMillis;
    private final long maxMillis;

    public SpinRedisLock(ClientRuntime runtime, String name) {
        super(runtime, name);
        this.initialMillis = runtime.config().spinBackoffInitial().toMillis();
        this.maxMillis = runtime.config().spinBackoffMax().toMillis();
    }

    @Override
    protected long backoffMillis(int failedAttempts) {
        int doublings = Math.min(failedAttempts - 1, 30);
        long ceiling = Math.min(maxMillis, initialMillis << doublings);
        // "Equal jitter": at least half the step, so contenders spread out but still back off.
        return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
    }

    @Override
    String type() {
        return "spin";
    }

    @Override
    public String toString() {
        return "SpinRedisLock{name='" + getName() + "'}";
    }
}
