package io.relock.spring;

import io.relock.LockLostException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ClassUtils;

import io.relock.DistributedLock;
import io.relock.LockLostEvent;
import io.relock.Relock;
import io.relock.RelockException;

/**
 * What the code inside a {@link WithLock} method or a {@link RelockTemplate} call can ask about
 * the lock that guards it: whether it is still held, and for a {@link WithLock.Type#FENCED}
 * lock the token to send with its writes, so that the storage can refuse a write from a holder
 * whose lease ran out while it was paused.
 *
 * <pre>{@code
 * long token = RelockLocks.current().token();
 * jdbc.update("UPDATE account SET balance = ?, fence = ? WHERE id = ? AND fence < ?", ..., token);
 * }</pre>
 *
 * <p>Locks are tracked per thread; a nested guarded call is the current one until it returns.
 * A transaction that begins inside a guarded call (a {@code @Transactional} method under
 * {@code @WithLock}, or a {@code TransactionTemplate} inside the call) checks the lock just
 * before it commits, and rolls back with {@link LockLostException} when the lock is gone (the
 * auto-configuration adds that check to the application's transaction managers).
 */
public final class RelockLocks {

    /** Whether relock-jdbc and Spring's JDBC support are both present: then {@link JdbcLeases} may load. */
    private static final boolean JDBC_PRESENT = ClassUtils.isPresent("io.relock.jdbc.LeaseCheck",
            RelockLocks.class.getClassLoader()) && ClassUtils.isPresent(
                    "org.springframework.jdbc.datasource.DataSourceUtils", RelockLocks.class.getClassLoader());


    private static final Logger LOG = LoggerFactory.getLogger(RelockLocks.class);

    // No initial value: a transaction asks on threads that never take a lock, and must not leave a deque there.
    private static final ThreadLocal<ArrayDeque<Held>> STACK = new ThreadLocal<>();
    private static final Set<Held> ACTIVE = ConcurrentHashMap.newKeySet();

    private RelockLocks() {}

    /**
     * The innermost lock that guards the code running on this thread.
     *
     * @return the lock
     * @throws IllegalStateException if no {@link WithLock} method or {@link RelockTemplate} call
     *     is running on this thread
     */
    public static Held current() {
        return find().orElseThrow(() -> new IllegalStateException(
                "no lock guards this thread: RelockLocks.current() works inside a @WithLock method "
                        + "or a RelockTemplate call, on the thread that called it"));
    }

    /**
     * The innermost lock that guards the code running on this thread, if any.
     *
     * @return the lock, or empty outside a guarded call
     */
    public static Optional<Held> find() {
        ArrayDeque<Held> stack = STACK.get();
        return Optional.ofNullable(stack == null ? null : stack.peek());
    }

    /** The guarded calls running on this thread, innermost first; empty outside one. */
    static List<Held> all() {
        ArrayDeque<Held> stack = STACK.get();
        return stack == null ? List.of() : new ArrayList<>(stack);
    }

    static void enter(Held held) {
        ArrayDeque<Held> stack = STACK.get();
        if (stack == null) {
            stack = new ArrayDeque<>();
            STACK.set(stack);
        }
        stack.push(held);
        ACTIVE.add(held);
    }

    static void exit(Held held) {
        held.exited = true;
        ACTIVE.remove(held);
        ArrayDeque<Held> stack = STACK.get();
        if (stack != null) {
            stack.remove(held);
            if (stack.isEmpty()) {
                STACK.remove();
            }
        }
    }

    /** Marks the guarded calls whose lock the event concerns; called by the client's listener. */
    static void lost(Relock client, LockLostEvent event) {
        for (Held held : ACTIVE) {
            if (held.client == client && held.owner == event.ownerThreadId()
                    && held.lockNames.contains(event.lockName())) {
                held.markLost(event.cause());
            }
        }
    }

    /** A lock held for one guarded call. */
    public static final class Held {

        private final Relock client;
        private final DistributedLock lock;
        private final boolean throwOnLost;
        private final List<String> lockNames;
        private final long owner;
        private final Map<String, Long> tokens;
        private final long leaseDeadlineNanos;
        private final boolean fixedLease;
        private volatile boolean lost;
        private volatile Throwable lostCause;
        private volatile boolean exited;
        private volatile LockLostException rolledBackWith;

        /**
         * With a fixed lease, {@code leaseDeadlineNanos} is when it is over at the latest;
         * {@code throwOnLost} false ({@code relock.on-lock-lost=log}) also lets a transaction
         * commit after the lock is lost.
         */
        Held(Relock client, DistributedLock lock, boolean throwOnLost, List<String> lockNames, long owner,
                Map<String, Long> tokens, boolean fixedLease, long leaseDeadlineNanos) {
            this.client = client;
            this.lock = lock;
            this.throwOnLost = throwOnLost;
            this.lockNames = List.copyOf(lockNames);
            this.owner = owner;
            this.tokens = Map.copyOf(tokens);
            this.fixedLease = fixedLease;
            this.leaseDeadlineNanos = leaseDeadlineNanos;
        }

        /**
         * The names of the locks held (one, or several for a collection key).
         *
         * @return the names, sorted
         */
        public List<String> lockNames() {
            return lockNames;
        }

        /**
         * Whether this client still believes it holds the lock: the watchdog has not reported it
         * lost and a fixed lease has not run out. {@code true} is this client's belief, not a
         * promise that no other client holds the lock (a paused process cannot know it was
         * paused); fencing tokens are the promise.
         *
         * @return whether the lock is still held
         */
        public boolean isHeld() {
            return !isLost();
        }

        /**
         * The opposite of {@link #isHeld()}.
         *
         * @return whether the lock was lost
         */
        public boolean isLost() {
            return lost || (fixedLease && System.nanoTime() - leaseDeadlineNanos >= 0);
        }

        /**
         * The fencing token of a {@link WithLock.Type#FENCED} lock: larger than the token of every
         * earlier holder of the same name.
         *
         * @return the token
         * @throws IllegalStateException if the lock is not fenced, or is several locks (use
         *     {@link #tokens()})
         */
        public long token() {
            if (tokens.isEmpty()) {
                throw new IllegalStateException("lock " + lockNames + " is not a FENCED lock: it has no token");
            }
            if (tokens.size() > 1) {
                throw new IllegalStateException("locks " + lockNames + " have one token each: use tokens()");
            }
            return tokens.values().iterator().next();
        }

        /**
         * The fencing tokens by lock name; empty unless the lock is {@link WithLock.Type#FENCED}.
         *
         * @return the tokens
         */
        public Map<String, Long> tokens() {
            return tokens;
        }

        Throwable lostCause() {
            return lostCause;
        }

        /** Whether a transaction inside this call should check the lock before it commits. */
        boolean checksBeforeCommit() {
            return throwOnLost;
        }

        /** The exception that rolled back a transaction of this call, or null. */
        LockLostException rolledBackWith() {
            return rolledBackWith;
        }

        /**
         * Called just before a transaction that began inside this call commits: throws
         * {@link LockLostException}, which rolls the transaction back, unless this owner still
         * holds the lock. When the lock lives in the database the transaction writes to
         * ({@code relock-jdbc}), the lease is read in the transaction itself and its row stays
         * locked until the commit: exact. Otherwise, besides this client's belief
         * ({@link #isLost()}) it asks Redis, one round trip per lock name, because a force-unlock, or a watchdog lease cut short by a
         * paused process, shows only at the watchdog's next renewal, up to a third of the lease
         * later. When Redis cannot answer, the belief decides: the watchdog counts the lock as
         * held until its lease could have run out.
         */
        void checkBeforeCommit() {
            if (exited) {
                return; // the commit comes after the call: not the call's lock to judge
            }
            if (!isLost()) {
                try {
                    if (JDBC_PRESENT && JdbcLeases.verifyInTransaction(client, lockNames, owner)) {
                        return; // held, and the rows stay locked in this transaction until it commits
                    }
                    if (!lock.isHeldByThread(owner)) {
                        markLost(null);
                    }
                } catch (LockLostException e) {
                    markLost(e.getCause());
                } catch (RelockException e) {
                    LOG.debug("cannot ask Redis whether {} is still held before commit: {}", lockNames, e.toString());
                }
            }
            if (isLost()) {
                LockLostException lostException = new LockLostException(lockNames, owner, lostCause, true);
                rolledBackWith = lostException;
                throw lostException;
            }
        }

        void markLost(Throwable cause) {
            lostCause = cause;
            lost = true;
        }

        @Override
        public String toString() {
            return "Held" + lockNames + (isLost() ? " (lost)" : "");
        }
    }
}
