package io.relock.spring;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Supplier;

import io.relock.Relock;

/**
 * The programmatic form of {@link WithLock}, for code that cannot go through a Spring proxy
 * (a call from inside the same bean, a lambda, a class Spring does not manage). Same semantics:
 * the action runs only while the lock is held, the lock is released when it returns or throws,
 * {@link RelockLocks#current()} works inside it, a transaction that begins inside the action
 * checks the lock before it commits, and a lock lost meanwhile is reported with
 * {@link LockLostException}. {@code execute} runs an action that returns a value, {@code run}
 * one that returns nothing:
 *
 * <pre>{@code
 * Receipt receipt = template.execute("recharge:" + orderId, Duration.ofSeconds(5), () -> credit(orderId));
 * }</pre>
 *
 * <p>Failure behaviour: not acquired within the wait time → {@link LockNotAcquiredException}
 * (the action did not run); interrupted while waiting → {@link LockNotAcquiredException} with
 * the thread's interrupt flag set; Redis failing while acquiring → {@code io.relock.RelockException}
 * (the action did not run); Redis failing on release → {@code io.relock.RelockException} after the
 * action ran (the lock stays until its lease ends); the action's own exception → rethrown as is.
 */
public class RelockTemplate implements AutoCloseable {

    private final LockRunner runner;

    /**
     * A template over a client that reports lost locks with {@link LockLostException}.
     *
     * @param relock the client
     * @throws NullPointerException if {@code relock} is null
     */
    public RelockTemplate(Relock relock) {
        this(relock, true);
    }

    /**
     * A template over a client.
     *
     * @param relock the client
     * @param throwOnLockLost whether a lock lost during the action is a {@link LockLostException}
     *     ({@code true}) or only a warning in the log
     * @throws NullPointerException if {@code relock} is null
     */
    public RelockTemplate(Relock relock, boolean throwOnLockLost) {
        this.runner = new LockRunner(Objects.requireNonNull(relock, "relock must not be null"), throwOnLockLost);
    }

    /**
     * The client this template locks with.
     *
     * @return the client
     */
    public Relock relock() {
        return runner.relock();
    }

    /**
     * Runs {@code action} while holding the reentrant lock {@code name}, renewed by the watchdog.
     *
     * @param name the lock's name
     * @param waitTime how long to wait for it; null to wait until acquired, zero for one attempt
     * @param action what to run
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank or {@code waitTime} negative
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public <T> T execute(String name, Duration waitTime, Supplier<T> action) {
        return execute(WithLock.Type.REENTRANT, List.of(name), waitTime, null, action);
    }

    /**
     * Runs {@code action} while holding the reentrant lock {@code name}; see
     * {@link #execute(String, Duration, Supplier)}.
     *
     * @param name the lock's name
     * @param waitTime how long to wait for it; null to wait until acquired, zero for one attempt
     * @param action what to run
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank or {@code waitTime} negative
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public void run(String name, Duration waitTime, Runnable action) {
        Objects.requireNonNull(action, "action must not be null");
        execute(WithLock.Type.REENTRANT, List.of(name), waitTime, null, () -> {
            action.run();
            return null;
        });
    }

    /**
     * Runs {@code action} while holding locks of the given type on every name (several names are
     * one multi-lock, taken in sorted order).
     *
     * @param type the kind of lock
     * @param names the locks' names, at least one
     * @param waitTime how long to wait; null to wait until acquired, zero for one attempt
     * @param leaseTime a fixed lease; null for a watchdog-renewed lock
     * @param action what to run
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if an argument other than a duration is null
     * @throws IllegalArgumentException if {@code names} is empty or has a blank name, a duration
     *     is negative or the lease zero
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if a lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public <T> T execute(WithLock.Type type, List<String> names, Duration waitTime, Duration leaseTime,
            Supplier<T> action) {
        Objects.requireNonNull(action, "action must not be null");
        LockRunner.Request request = request(type, names, waitTime, leaseTime);
        try {
            return runner.run(request, action::get, notAcquired -> {
                throw notAcquired;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            // A Supplier throws nothing checked (short of sneaky throws): pass it on unchanged in kind.
            throw new IllegalStateException(impossible);
        }
    }

    LockRunner runner() {
        return runner;
    }

    static LockRunner.Request request(WithLock.Type type, List<String> names, Duration waitTime, Duration leaseTime) {
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(names, "names must not be null");
        if (names.isEmpty()) {
            throw new IllegalArgumentException("names must not be empty");
        }
        TreeSet<String> sorted = new TreeSet<>();
        for (String name : names) {
            Objects.requireNonNull(name, "a lock name must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("a lock name must not be blank: '" + name + "'");
            }
            sorted.add(name);
        }
        if (waitTime != null && waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must not be negative: " + waitTime);
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.toMillis() == 0)) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime);
        }
        return new LockRunner.Request(type, List.copyOf(sorted), waitTime, leaseTime);
    }

    /** Stops listening for lost locks on the client; the client itself stays open. */
    @Override
    public void close() {
        runner.close();
    }
}
