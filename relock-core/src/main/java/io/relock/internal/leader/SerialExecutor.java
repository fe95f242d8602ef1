package io.relock.internal.leader;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order submitted, on a shared executor's threads: one
 * election's events never overlap and never need a thread of their own.
 */
final class SerialExecutor implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);

    private final Executor threads;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();

    SerialExecutor(Executor threads) {
        this.threads = threads;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        schedule();
    }

    private void schedule() {
        if (!tasks.isEmpty() && draining.compareAndSet(false, true)) {
            try {
                threads.execute(this::drain);
            } catch (RuntimeException e) {
                // The client's threads are shut down: nothing will run any more.
                draining.set(false);
                LOG.debug("dropping {} tasks, the client's threads are gone: {}", tasks.size(), e.toString());
                tasks.clear();
            }
        }
    }

    private void drain() {
        try {
            for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.error("leader election task failed", e);
                }
            }
        } finally {
            draining.set(false);
            // A task added after the last poll and before the flag was cleared.
            schedule();
        }
    }
}
