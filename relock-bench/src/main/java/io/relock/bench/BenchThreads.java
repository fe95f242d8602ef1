package io.relock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.IntFunction;

/** The loops the store benches share: threads that repeat a cycle for a given time, and hand-offs. */
final class BenchThreads {

    private BenchThreads() {}

    /** Makes the cycle one thread repeats; {@code thread} runs from 0. */
    @FunctionalInterface
    interface Body {
        Runnable forThread(int thread) throws Exception;
    }

    /**
     * Runs {@code threads} threads, each repeating its cycle until {@code seconds} have passed.
     *
     * @throws IllegalStateException if a cycle threw, with the first failure as its cause
     */
    static void run(int threads, int seconds, Body body) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            Runnable cycle = body.forThread(t);
            workers.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        cycle.run();
                    }
                } catch (RuntimeException e) {
                    failures.add(e);
                }
            }));
        }
        workers.forEach(Thread::start);
        // The measured interval; the workers stop at the next cycle's end.
        TimeUnit.SECONDS.sleep(seconds);
        stop.set(true);
        for (Thread worker : workers) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a bench thread failed", failures.get(0));
        }
    }

    /**
     * Hand-offs across two clients, {@code rounds} of them: in round {@code i}, {@code holder(i)}
     * is locked, a thread waits in {@code waiter(i).lock()}, and the holder is released.
     *
     * @return release-to-acquire of each round, in ms
     */
    static double[] handOffs(int rounds, IntFunction<Lock> holderOf, IntFunction<Lock> waiterOf)
            throws InterruptedException {
        double[] millis = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            Lock holder = holderOf.apply(i);
            Lock waiter = waiterOf.apply(i);
            holder.lock();
            CountDownLatch started = new CountDownLatch(1);
            AtomicLong acquiredAt = new AtomicLong();
            Thread thread = new Thread(() -> {
                started.countDown();
                waiter.lock();
                acquiredAt.set(System.nanoTime());
                waiter.unlock();
            });
            thread.start();
            started.await();
            // Time for the waiter to find the lock busy and park: a measurement, not a test's synchronisation.
            TimeUnit.MILLISECONDS.sleep(30);
            long releasedAt = System.nanoTime();
            holder.unlock();
            thread.join();
            millis[i] = (acquiredAt.get() - releasedAt) / 1e6;
        }
        return millis;
    }

    /**
     * Each repeat's ratio {@code numerator[r] / denominator[r]}: two runs made one right after
     * the other, so a machine whose speed moves between minutes moves both alike. Their median
     * is the ratio a bench reports.
     */
    static double[] ratios(double[] numerator, double[] denominator) {
        double[] ratios = new double[numerator.length];
        for (int r = 0; r < ratios.length; r++) {
            ratios[r] = numerator[r] / denominator[r];
        }
        return ratios;
    }

    static double median(double[] values) {
        return percentile(values, 0.5);
    }

    /** The value below which {@code fraction} of {@code values} lie (nearest rank). */
    static double percentile(double[] values, double fraction) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * fraction))];
    }
}
