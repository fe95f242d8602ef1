package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Bounded waits on processes that are not necessarily children of the test JVM. */
final class ProcessAssertions {

    private static final long POLL_MILLIS = 20;

    private ProcessAssertions() {
    }

    /**
     * Asserts that {@code pid} is dead, or dies within {@code timeout}. A zombie counts as dead:
     * an orphan is reaped by whatever init the machine runs, when that init gets to it (in
     * containers it may take seconds, or never happen), and the JDK reports zombies as alive.
     */
    static void assertDiesWithin(long pid, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (isAlive(pid)) {
            long left = deadline - System.nanoTime();
            assertThat(left).as("process %d (state %s) died within %s", pid, Processes.state(pid), timeout).isPositive();
            Optional<ProcessHandle> process = ProcessHandle.of(pid);
            if (process.isEmpty()) {
                return;
            }
            try {
                // Returns early if the process is reaped; otherwise re-check for a zombie.
                process.get().onExit().get(Math.min(POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left) + 1), TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException stillThere) {
                // loop: the deadline above bounds it
            }
        }
    }

    /** Returns whether {@code pid} is alive and not a zombie. */
    static boolean isAlive(long pid) {
        boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        return alive && Processes.state(pid) != 'Z';
    }
}
