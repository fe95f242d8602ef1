package io.relock.spring;

import io.relock.LockLostException;
import io.relock.LockNotAcquiredException;
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
 * checks the lock before it commits (on the transaction managers of a context that has the
 * auto-configuration), and a lock lost meanwhile is reported with
 * {@link LockLostException}. {@code execute} runs an action that returns a value, {@code run}
 * one that returns nothing:
 *
 * <pre>{@code
 * Receipt receipt = template.execute("recharge:" + orderId, Duration.ofSeconds(5), () -> credit(orderId));
 * template.run("recharge:" + orderId, Duration.ofSeconds(5), () -> markPaid(orderId));
 * }</pre>
 *
 * <p>A wait time of {@code null} (or the forms without one) means the template's default wait
 * time: {@code relock.default-wait-time} for the auto-configured template; without a default,
 * wait until acquired. A zero or negative wait time is one attempt, as in core's
 * {@code tryLock} and the Reactor and Kotlin faces (a negative one is taken as zero).
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
     * A template over a client that reports lost locks with {@link LockLostException} and,
     * without a wait time, waits until acquired.
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
        this(relock, throwOnLockLost, null);
    }

    /**
     * A template over a client, with a default wait time.
     *
     * @param relock the client
     * @param throwOnLockLost whether a lock lost during the action is a {@link LockLostException}
     *     ({@code true}) or only a warning in the log; when it is only a warning, a transaction
     *     inside the action commits although the lock is lost
     * @param defaultWaitTime how long calls that give no wait time (and {@link WithLock} methods
     *     without {@code waitTime}) wait; null to wait until acquired, zero or negative for one
     *     attempt
     * @throws NullPointerException if {@code relock} is null
     */
    public RelockTemplate(Relock relock, boolean throwOnLockLost, Duration defaultWaitTime) {
        Objects.requireNonNull(relock, "relock must not be null");
        this.runner = new LockRunner(relock, throwOnLockLost, oneAttemptIfNegative(defaultWaitTime));
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
     * How long calls without a wait time wait.
     *
     * @return the default wait time, or null for "until acquired"; zero (also for a negative
     *     one given) for one attempt
     */
    public Duration defaultWaitTime() {
        return runner.defaultWaitTime();
    }

    /**
     * Runs {@code action}, which returns a value, while holding the reentrant lock {@code name},
     * waiting at most the {@linkplain #defaultWaitTime() default wait time}; see
     * {@link #execute(String, Duration, Supplier)}.
     *
     * @param name the lock's name
     * @param action what to run
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public <T> T execute(String name, Supplier<T> action) {
        return execute(name, null, action);
    }

    /**
     * Runs {@code action}, which returns a value, while holding the reentrant lock {@code name},
     * renewed by the watchdog. For an action that returns nothing, use
     * {@link #run(String, Duration, Runnable)}.
     *
     * @param name the lock's name
     * @param waitTime how long to wait for it; null for the default wait time, zero or negative for one attempt
     * @param action what to run
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public <T> T execute(String name, Duration waitTime, Supplier<T> action) {
        return execute(WithLock.Type.REENTRANT, List.of(name), waitTime, null, action);
    }

    /**
     * Runs {@code action}, which returns nothing, while holding the reentrant lock {@code name},
     * waiting at most the {@linkplain #defaultWaitTime() default wait time}; see
     * {@link #execute(String, Duration, Supplier)}.
     *
     * @param name the lock's name
     * @param action what to run
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public void run(String name, Runnable action) {
        run(name, null, action);
    }

    /**
     * Runs {@code action}, which returns nothing, while holding the reentrant lock {@code name},
     * renewed by the watchdog; see {@link #execute(String, Duration, Supplier)}.
     *
     * @param name the lock's name
     * @param waitTime how long to wait for it; null for the default wait time, zero or negative for one attempt
     * @param action what to run
     * @throws NullPointerException if {@code name} or {@code action} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if the lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public void run(String name, Duration waitTime, Runnable action) {
        run(WithLock.Type.REENTRANT, List.of(name), waitTime, null, action);
    }

    /**
     * Runs {@code action}, which returns nothing, while holding locks of the given type on every
     * name; see {@link #execute(WithLock.Type, List, Duration, Duration, Supplier)}.
     *
     * @param type the kind of lock
     * @param names the locks' names, at least one
     * @param waitTime how long to wait; null for the default wait time, zero or negative for one attempt
     * @param leaseTime a fixed lease; null for a watchdog-renewed lock
     * @param action what to run
     * @throws NullPointerException if an argument other than a duration is null
     * @throws IllegalArgumentException if {@code names} is empty or has a blank name, or the lease
     *     is zero or negative
     * @throws LockNotAcquiredException if not acquired in time, or interrupted while waiting
     * @throws LockLostException if a lock was lost while the action ran
     * @throws io.relock.RelockException if Redis fails
     */
    public void run(WithLock.Type type, List<String> names, Duration waitTime, Duration leaseTime, Runnable action) {
        Objects.requireNonNull(action, "action must not be null");
        execute(type, names, waitTime, leaseTime, () -> {
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
     * @param waitTime how long to wait; null for the default wait time, zero or negative for one attempt
     * @param leaseTime a fixed lease; null for a watchdog-renewed lock
     * @param action what to run
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if an argument other than a duration is null
     * @throws IllegalArgumentException if {@code names} is empty or has a blank name, or the lease
     *     is zero or negative
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
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.toMillis() == 0)) {
            throw new IllegalArgumentException("leaseTime must be at least 1 ms: " + leaseTime);
        }
        return new LockRunner.Request(type, List.copyOf(sorted), oneAttemptIfNegative(waitTime), leaseTime);
    }

    /** A negative wait is one attempt, as zero is: core's, Reactor's and Kotlin's rule. */
    static Duration oneAttemptIfNegative(Duration waitTime) {
        return waitTime != null && waitTime.isNegative() ? Duration.ZERO : waitTime;
    }

    /** Stops listening for lost locks on the client; the client itself stays open. */
    @Override
    public void close() {
        runner.close();
    }
}
