package io.relock.bench;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.bench.FailoverOptions.Mode;
import io.relock.testkit.SentinelTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * The locking load of one mode of {@link FailoverRun}: {@value #CLIENTS} clients of
 * {@value #THREADS_PER_CLIENT} threads loop {@code tryLock} → a busy critical section →
 * {@code unlock} over {@value #LOCKS} lock names, and count what they see: critical sections,
 * two-holder incidents (checked in the JVM, not by the lock), lost-lease events and failures by
 * type, in total and per {@link Phase}.
 */
final class FailoverWorkload implements AutoCloseable {

    static final int CLIENTS = 4;
    static final int THREADS_PER_CLIENT = 2;
    static final int LOCKS = 4;
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(3);
    static final Duration REPLICA_SYNC_TIMEOUT = Duration.ofMillis(500);
    static final long WAIT_MILLIS = 2000;
    static final long LEASE_MILLIS = 2000;
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long CRITICAL_SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Critical sections each client must complete after a failover for it to count as followed. */
    private static final int PROGRESS = 3;
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    private final Mode mode;
    private final String prefix;
    private final List<Relock> clients = new ArrayList<>();
    private final List<Thread> workers = new ArrayList<>();
    private final AtomicInteger[] occupancy = new AtomicInteger[LOCKS];
    private volatile boolean stopped;
    private volatile Phase phase = new Phase();

    final LongAdder acquisitions = new LongAdder();
    final LongAdder incidents = new LongAdder();
    final LongAdder waitsRanOut = new LongAdder();
    final LongAdder lostGone = new LongAdder();
    final LongAdder lostRenewal = new LongAdder();
    final LongAdder unlockGoneWithinLease = new LongAdder();
    final LongAdder unlockGoneOther = new LongAdder();
    final AtomicLong longestCallNanos = new AtomicLong();
    final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    final Map<String, String> firstMessages = new ConcurrentHashMap<>();
    final Set<String> unexpected = ConcurrentHashMap.newKeySet();
    final List<String> hungWorkers = new ArrayList<>();

    /** Creates the clients (closing those created if one fails); {@link #start()} starts their workers. */
    FailoverWorkload(SentinelTopology topology, Mode mode, String prefix) {
        this.mode = mode;
        this.prefix = prefix;
        Arrays.setAll(occupancy, i -> new AtomicInteger());
        try {
            for (int i = 0; i < CLIENTS; i++) {
                Relock client = Relock.create(config(topology, mode));
                clients.add(client);
                client.addLockListener(event -> (event.cause() == null ? lostGone : lostRenewal).increment());
            }
        } catch (RuntimeException e) {
            clients.forEach(Relock::close);
            throw e;
        }
    }

    /** A client configuration of this mode: Sentinel, short timeouts, and the mode's replica sync. */
    static RelockConfig config(SentinelTopology topology, Mode mode) {
        RelockConfig.Builder builder = RelockConfig.builder()
                .sentinel(topology.masterName(), topology.sentinelUris().toArray(String[]::new))
                .commandTimeout(COMMAND_TIMEOUT)
                .watchdogTimeout(WATCHDOG_TIMEOUT);
        if (mode.replicas > 0) {
            builder.replicaSync(mode.replicas, REPLICA_SYNC_TIMEOUT);
        }
        return builder.build();
    }

    /** Starts the workers: per client, one thread on the watchdog and one with a lease. */
    void start() {
        for (int client = 0; client < CLIENTS; client++) {
            for (int thread = 0; thread < THREADS_PER_CLIENT; thread++) {
                int c = client;
                boolean watchdog = thread == 0;
                String name = "failover-" + mode.flag + "-" + client + "." + thread;
                Thread worker = new Thread(() -> work(c, watchdog), name);
                worker.setDaemon(true);
                workers.add(worker);
                worker.start();
            }
        }
    }

    /** {@return the stretch of the run the workers count into now} */
    Phase phase() {
        return phase;
    }

    /** Makes the workers count into {@code next} from now on. */
    void enter(Phase next) {
        phase = next;
    }

    /** {@return the connection name of client {@code client} on Redis} */
    String clientName(int client) {
        return "relock:" + clients.get(client).clientId();
    }

    private void work(int client, boolean watchdog) {
        Relock relock = clients.get(client);
        DistributedLock[] locks = new DistributedLock[LOCKS];
        Arrays.setAll(locks, i -> relock.getLock(prefix + i));
        while (!stopped) {
            int index = ThreadLocalRandom.current().nextInt(LOCKS);
            DistributedLock lock = locks[index];
            long asked = System.nanoTime();
            boolean acquired;
            try {
                acquired = lock.tryLock(WAIT_MILLIS, watchdog ? -1 : LEASE_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                failed(client, "tryLock", e, e instanceof RelockException);
                // An application's pause before it retries: calls fail at once while the master
                // refuses connections, and a worker retrying at once would starve the machine.
                LockSupport.parkNanos(RETRY_PAUSE_NANOS);
                continue;
            } finally {
                timed(asked);
            }
            if (!acquired) {
                waitsRanOut.increment();
                continue;
            }
            Phase current = phase;
            criticalSection(index, current);
            current.completed(client, index);
            acquisitions.increment();
            long unlocking = System.nanoTime();
            try {
                lock.unlock();
            } catch (IllegalMonitorStateException e) {
                failed(client, "unlock", e, true);
                // From the start of tryLock to the end of unlock is longer than the hold lived on
                // Redis: under the lease, it cannot have expired — it vanished.
                boolean withinLease = !watchdog
                        && System.nanoTime() - asked < TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS);
                (withinLease ? unlockGoneWithinLease : unlockGoneOther).increment();
            } catch (RuntimeException e) {
                failed(client, "unlock", e, e instanceof RelockException);
            } finally {
                timed(unlocking);
            }
        }
    }

    private void criticalSection(int index, Phase current) {
        if (occupancy[index].incrementAndGet() > 1) {
            incidents.increment();
            current.incidents.increment();
        }
        long end = System.nanoTime() + CRITICAL_SECTION_NANOS;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
        occupancy[index].decrementAndGet();
    }

    private void failed(int client, String operation, RuntimeException e, boolean named) {
        String key = operation + " " + e.getClass().getSimpleName();
        errors.computeIfAbsent(key, k -> new LongAdder()).increment();
        firstMessages.putIfAbsent(key, String.valueOf(e.getMessage()));
        phase.lastFailure.set(client, key + ": " + e.getMessage());
        if (!named) {
            unexpected.add(key);
        }
    }

    private void timed(long startNanos) {
        longestCallNanos.accumulateAndGet(System.nanoTime() - startNanos, Math::max);
    }

    /** Stops the workers and waits for them; a worker still running after the stop timeout counts as hung. */
    void stop() throws InterruptedException {
        stopped = true;
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        for (Thread worker : workers) {
            worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (worker.isAlive()) {
                hungWorkers.add(worker.getName() + " at " + Arrays.stream(worker.getStackTrace()).limit(12)
                        .map(StackTraceElement::toString).collect(Collectors.joining(" < ")));
            }
        }
    }

    long lostEvents() {
        return lostGone.sum() + lostRenewal.sum();
    }

    long unlockGone() {
        return unlockGoneWithinLease.sum() + unlockGoneOther.sum();
    }

    long errorTotal() {
        return errors.values().stream().mapToLong(LongAdder::sum).sum();
    }

    @Override
    public void close() {
        stopped = true;
        clients.forEach(Relock::close);
    }

    /**
     * A stretch of the run — before the first failover, during one, during a split, after one —
     * with its own progress latches and counts.
     */
    static final class Phase {

        final LongAdder acquisitions = new LongAdder();
        final LongAdder incidents = new LongAdder();
        final CountDownLatch[] perClient = new CountDownLatch[CLIENTS];
        final CountDownLatch[] perLock = new CountDownLatch[LOCKS];
        final AtomicReferenceArray<String> lastFailure = new AtomicReferenceArray<>(CLIENTS);

        Phase() {
            Arrays.setAll(perClient, i -> new CountDownLatch(PROGRESS));
            Arrays.setAll(perLock, i -> new CountDownLatch(1));
        }

        void completed(int client, int lock) {
            acquisitions.increment();
            perClient[client].countDown();
            perLock[lock].countDown();
        }

        /** Waits until every client and lock made progress; false at the deadline. */
        boolean awaitProgress(long deadlineNanos) throws InterruptedException {
            for (CountDownLatch latch : perClient) {
                if (!latch.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            for (CountDownLatch latch : perLock) {
                if (!latch.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            return true;
        }

        String progress() {
            StringBuilder text = new StringBuilder("critical sections " + acquisitions.sum()
                    + ", per client still missing "
                    + Arrays.stream(perClient).map(l -> Long.toString(l.getCount())).collect(Collectors.joining("/"))
                    + ", locks never taken " + Arrays.stream(perLock).filter(l -> l.getCount() > 0).count());
            for (int client = 0; client < CLIENTS; client++) {
                if (perClient[client].getCount() > 0) {
                    text.append("; client ").append(client).append(" last failed with ")
                            .append(lastFailure.get(client));
                }
            }
            return text.toString();
        }
    }
}
