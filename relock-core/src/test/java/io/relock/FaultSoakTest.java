package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.internal.redis.Script;
import io.relock.testkit.Eventually;
import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * Many random faults while clients contend. Three clients behind a {@link FaultProxy} and one
 * beside it run a reentrant, a fenced and a fair lock (two workers each), re-entering and releasing, with
 * a short watchdog so renewals run too; meanwhile one script call at a time (acquire, release or
 * renewal) is cut before it reaches Redis, after it reached Redis, or after Redis answered.
 *
 * <p>The history checked: no two holders of a name at any moment (counted in the JVM, not
 * trusting the lock), no call fails (every cut is retried and recognised), every worker keeps
 * making progress, and at the end Redis holds nothing. The number of faults is the system
 * property {@code relock.faults} (default 30, about half a minute); a longer run:
 * {@code mvn -B -pl relock-core test -Dtest=FaultSoakTest -Drelock.faults=1000}. Which call each
 * fault cuts, and where, is drawn from a seed printed at the start; {@code -Drelock.faults.seed}
 * draws the same faults again (the timing around them differs from run to run).
 */
class FaultSoakTest {

    private static final int FAULTS = Integer.getInteger("relock.faults", 30);
    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;
    private static final List<String> NAMES = List.of("soak:reentrant", "soak:fenced", "soak:fair");
    private static final List<String> MARKERS = List.of(Script.LOCK_ACQUIRE.sha(false), Script.LOCK_RELEASE.sha(false),
            Script.FENCED_ACQUIRE.sha(false), Script.FAIR_ACQUIRE.sha(false), Script.FAIR_RELEASE.sha(false),
            Script.LOCK_RENEW.sha(false));
    private static final List<BiFunction<Relock, String, DistributedLock>> TYPES =
            List.of(Relock::getLock, Relock::getFencedLock, Relock::getFairLock);

    @Test
    void randomCutsNeverLetTwoHoldersInNorLeaveAnythingHeld() throws Exception {
        long seed = Long.getLong("relock.faults.seed", System.nanoTime());
        System.out.println("FaultSoakTest seed (-Drelock.faults.seed): " + seed);
        Random random = new Random(seed);
        try (RedisServer server = RedisServer.start(); FaultProxy proxy = FaultProxy.to(server);
                Clients direct = new Clients(server);
                Clients proxied = new Clients(Backend.single(server).withUri(proxy.uri()))) {
            List<Relock> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                clients.add(proxied.create(Clients.SHORT_WATCHDOG));
            }
            clients.add(direct.create(Clients.SHORT_WATCHDOG));

            Map<String, AtomicBoolean> inside = new ConcurrentHashMap<>();
            NAMES.forEach(name -> inside.put(name, new AtomicBoolean()));
            AtomicInteger overlaps = new AtomicInteger();
            Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicBoolean stop = new AtomicBoolean();
            List<AtomicInteger> progress = new ArrayList<>();
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            int worker = 0;
            for (Relock client : clients) {
                for (int thread = 0; thread < 2; thread++, worker++) {
                    // Each name is one lock type for everyone, so that all its workers exclude each other.
                    String name = NAMES.get(worker % NAMES.size());
                    BiFunction<Relock, String, DistributedLock> type = TYPES.get(NAMES.indexOf(name));
                    DistributedLock lock = type.apply(client, name);
                    AtomicInteger done = new AtomicInteger();
                    progress.add(done);
                    workers.add(Threads.run(() -> {
                        while (!stop.get()) {
                            try {
                                cycle(lock, inside.get(name), overlaps);
                                done.incrementAndGet();
                            } catch (RuntimeException e) {
                                failures.add(e);
                            }
                        }
                        return null;
                    }));
                }
            }

            int fired = 0;
            try {
                for (int i = 0; i < FAULTS; i++) {
                    String marker = MARKERS.get(random.nextInt(MARKERS.size()));
                    FaultProxy.Fault fault = switch (random.nextInt(3)) {
                        case 0 -> proxy.cutBeforeRequest(marker);
                        case 1 -> proxy.cutAfterRequest(marker);
                        default -> proxy.cutBeforeReply(marker);
                    };
                    fault.awaitTriggered(PROMPTLY);
                    fired++;
                    // Every call in flight at the cut has completed before the next fault: a fault
                    // hits a call at most once, as a blip does, rather than every one of its retries.
                    awaitProgressOfEveryWorker(progress, failures, server, clients);
                }
                awaitProgressOfEveryWorker(progress, failures, server, clients);
            } finally {
                // Also on a failure: the workers would otherwise spin on closed clients for the
                // rest of the test run, each failed call kept in the failures.
                stop.set(true);
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

            assertThat(fired).isEqualTo(FAULTS);
            assertThat(overlaps).as("two holders at once").hasValue(0);
            assertThat(failures).as("calls that failed despite the retries").isEmpty();
            for (String name : NAMES) {
                assertThat(clients.get(3).getLockInfo(name).holders()).as("held on Redis after everyone let go: " + name)
                        .isEmpty();
            }
        }
    }

    private static void awaitProgressOfEveryWorker(List<AtomicInteger> progress, Queue<Throwable> failures,
            RedisServer server, List<Relock> clients) {
        int[] before = progress.stream().mapToInt(AtomicInteger::get).toArray();
        try {
            Eventually.await(PROMPTLY, "every worker completes a cycle", () -> {
                for (int i = 0; i < before.length; i++) {
                    if (progress.get(i).get() <= before[i]) {
                        return false;
                    }
                }
                return true;
            });
        } catch (AssertionError stalled) {
            StringBuilder state = new StringBuilder(stalled.getMessage());
            for (int i = 0; i < before.length; i++) {
                state.append("\nworker ").append(i).append(" (").append(NAMES.get(i % NAMES.size())).append("): ")
                        .append(before[i]).append(" -> ").append(progress.get(i).get());
            }
            for (String name : NAMES) {
                state.append("\n").append(clients.get(3).getLockInfo(name));
            }
            state.append("\nkeys on Redis: ").append(server.command("KEYS", "*"));
            state.append("\nhand-off queue: ").append(server.command("ZRANGE", "{soak:reentrant}:handoff", "0", "-1"));
            Thread.getAllStackTraces().forEach((thread, stack) -> {
                if (Arrays.stream(stack).anyMatch(frame -> frame.getClassName().equals(FaultSoakTest.class.getName()))) {
                    state.append("\n").append(thread.getName()).append(" ").append(thread.getState());
                    Arrays.stream(stack).limit(25).forEach(frame -> state.append("\n    at ").append(frame));
                }
            });
            state.append("\nfailures: ").append(failures);
            throw new AssertionError(state.toString(), stalled);
        }
    }

    /** Lock, enter, re-enter, leave, unlock twice: every call a fault may hit. */
    private static void cycle(DistributedLock lock, AtomicBoolean inside, AtomicInteger overlaps) {
        lock.lock();
        try {
            if (!inside.compareAndSet(false, true)) {
                overlaps.incrementAndGet();
            }
            lock.lock();
            try {
                inside.set(false);
            } finally {
                lock.unlock();
            }
        } finally {
            lock.unlock();
        }
    }
}
