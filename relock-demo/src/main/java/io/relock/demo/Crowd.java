package io.relock.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Many platform threads that start their task at the same instant: each is started and parked
 * on one start gate, and {@link #open()} releases them all together. Failures of the tasks are
 * collected, not lost.
 */
final class Crowd {

    /** What each thread does; {@code index} runs from 0 to size - 1. */
    @FunctionalInterface
    interface Task {
        void run(int index) throws Exception;
    }

    private final CountDownLatch gate = new CountDownLatch(1);
    private final CountDownLatch finished;
    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

    private Crowd(int size) {
        this.finished = new CountDownLatch(size);
    }

    /** Starts {@code size} threads named {@code name-<index>}, each waiting at the gate. */
    static Crowd gather(String name, int size, Task task) {
        Crowd crowd = new Crowd(size);
        for (int i = 0; i < size; i++) {
            int index = i;
            Thread thread = new Thread(() -> crowd.runBehindGate(index, task), name + "-" + i);
            thread.setDaemon(true);
            crowd.threads.add(thread);
            thread.start();
        }
        return crowd;
    }

    /** Opens the gate: every thread starts its task now. */
    void open() {
        gate.countDown();
    }

    /**
     * Waits until every thread has finished its task.
     *
     * @return {@code false} if some were still running at the timeout (they are interrupted)
     */
    boolean awaitFinished(Duration timeout) throws InterruptedException {
        if (finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        threads.forEach(Thread::interrupt);
        return false;
    }

    /** The exceptions the tasks threw, in no particular order. */
    List<Throwable> errors() {
        return List.copyOf(errors);
    }

    private void runBehindGate(int index, Task task) {
        try {
            gate.await();
            task.run(index);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            errors.add(e);
        } catch (Exception | Error e) {
            errors.add(e);
        } finally {
            finished.countDown();
        }
    }
}
