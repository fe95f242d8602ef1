package io.relock.bench;

import io.relock.testkit.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import org.HdrHistogram.Histogram;

/**
 * S4, the heavier lock types: a fair lock's cost per acquisition with 1, 10 and 100 waiters
 * (waiters + 1 threads contending on one name, with the S2 critical-section checks), a
 * RedLock over five independent masters at 8 threads, each thread its own name, and the same
 * RedLock across regions ({@code S4/redlock-wan}): one thread, the five masters behind proxies
 * that add round trips of {@link #WAN_RTT_MILLIS} ms. A library version without the lock type
 * reports the case as not available; RedisLockRegistry, which has neither, does not run this
 * scenario.
 */
final class S4FairAndRedLock implements Scenario {

    static final int REDLOCK_THREADS = 8;

    /** The round trips to the five masters of {@code S4/redlock-wan}, as between regions. */
    static final List<Integer> WAN_RTT_MILLIS = List.of(4, 10, 20, 50, 100);
    /** The round trip within which a majority (3 of 5) of those masters answers. */
    static final int WAN_MAJORITY_RTT_MILLIS = 20;

    @Override
    public String id() {
        return "S4";
    }

    @Override
    public String title() {
        return "fair lock with waiters; RedLock over 5 masters";
    }

    @Override
    public List<String> cases(boolean quick) {
        return quick ? List.of("S4/fair10", "S4/redlock")
                : List.of("S4/fair1", "S4/fair10", "S4/fair100", "S4/redlock", "S4/redlock-wan");
    }

    /** Spring Integration's lock registries have neither a fair lock nor a RedLock. */
    @Override
    public String without(String caseId, Library library) {
        return library == Library.REGISTRY ? "no fair lock and no RedLock in Spring Integration" : null;
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        return switch (caseId) {
            case "S4/redlock" -> redLock(caseId, context);
            case "S4/redlock-wan" -> redLockWan(caseId, context);
            default -> fair(caseId, context);
        };
    }

    private static CaseResult fair(String caseId, WorkerContext context) {
        int waiters = Integer.parseInt(caseId.substring("S4/fair".length()));
        CaseResult result = new CaseResult(caseId, "S4 fair lock, " + waiters + (waiters == 1 ? " waiter" : " waiters"));
        try (LockLibrary client = context.connect()) {
            int threads = waiters + 1;
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                Optional<Lock> lock = client.fairLock("bench:s4:fair");
                if (lock.isEmpty()) {
                    return result.unavailable("no fair lock in this " + context.library().displayName() + " version");
                }
                locks[i] = lock.get();
            }
            return S2Contended.measureExclusive(result, threads, locks, context);
        }
    }

    private static CaseResult redLock(String caseId, WorkerContext context) {
        CaseResult result = new CaseResult(caseId, "S4 RedLock, " + context.masters().size() + " masters, "
                + REDLOCK_THREADS + " threads");
        if (context.masters().isEmpty()) {
            return result.error("no masters were started for RedLock");
        }
        List<LockLibrary> clients = new ArrayList<>();
        try {
            for (String master : context.masters()) {
                clients.add(context.library().connect(master, null));
            }
            Lock[] locks = new Lock[REDLOCK_THREADS];
            for (int i = 0; i < REDLOCK_THREADS; i++) {
                Optional<Lock> lock = clients.get(0).redLock("bench:s4:redlock:" + i, clients);
                if (lock.isEmpty()) {
                    return result.unavailable("no RedLock in this " + context.library().displayName() + " version");
                }
                locks[i] = lock.get();
            }
            // No counting phase: round trips would have to be counted on five servers at once.
            Load.Timing timing = new Load.Timing(context.timing().warmup(), context.timing().window(),
                    Duration.ZERO);
            Load.Outcome outcome = Load.run(REDLOCK_THREADS, worker -> {
                Lock lock = locks[worker.index];
                long start = System.nanoTime();
                lock.lock();
                lock.unlock();
                return System.nanoTime() - start;
            }, timing, context.masterAdmins());
            return result.load(outcome, Metric.CYCLES_PER_S, Metric.CYCLE_P50_US, Metric.CYCLE_P99_US);
        } finally {
            clients.forEach(LockLibrary::close);
        }
    }

    /**
     * One thread locks and unlocks a RedLock whose five masters sit behind delaying proxies (a
     * standing delay of half the round trip each way), as masters in five regions would. Reports
     * the lock + unlock cycle's p50 (and the acquire's, as the wait p50) to compare with the
     * majority's round trip: a RedLock needs one majority round trip to acquire and, when its
     * unlock returns on a majority, one to release.
     */
    private static CaseResult redLockWan(String caseId, WorkerContext context) {
        CaseResult result = new CaseResult(caseId, "S4 RedLock across regions, RTT " + WAN_RTT_MILLIS.stream()
                .map(String::valueOf).collect(java.util.stream.Collectors.joining("/")) + " ms, 1 thread");
        if (context.masters().size() != WAN_RTT_MILLIS.size()) {
            return result.error("needs " + WAN_RTT_MILLIS.size() + " masters, got " + context.masters().size());
        }
        List<FaultProxy> proxies = new ArrayList<>();
        List<LockLibrary> clients = new ArrayList<>();
        try {
            for (int i = 0; i < WAN_RTT_MILLIS.size(); i++) {
                URI master = URI.create(context.masters().get(i));
                FaultProxy proxy = FaultProxy.to(master.getHost(), master.getPort());
                proxies.add(proxy);
                proxy.delay(Duration.ofMillis(WAN_RTT_MILLIS.get(i)).dividedBy(2));
                clients.add(context.library().connect(proxy.uri(), null));
            }
            Optional<Lock> redLock = clients.get(0).redLock("bench:s4:redlock-wan", clients);
            if (redLock.isEmpty()) {
                return result.unavailable("no RedLock in this " + context.library().displayName() + " version");
            }
            Lock lock = redLock.get();
            Histogram acquires = new Histogram(3);
            Load.Timing timing = new Load.Timing(context.timing().warmup(), context.timing().window(), Duration.ZERO);
            Load.Outcome outcome = Load.run(1, worker -> {
                Load.Phase phase = worker.phase();
                long start = System.nanoTime();
                lock.lock();
                long acquired = System.nanoTime();
                lock.unlock();
                if (phase == Load.Phase.MEASURE) {
                    acquires.recordValue(acquired - start);
                }
                return System.nanoTime() - start;
            }, timing, context.masterAdmins());
            result.load(outcome, Metric.CYCLES_PER_S, Metric.CYCLE_P50_US, Metric.CYCLE_P99_US);
            if (acquires.getTotalCount() > 0) {
                result.metric(Metric.WAIT_P50_US, acquires.getValueAtPercentile(50) / 1e3);
            }
            return result.detail("majority RTT ms", WAN_MAJORITY_RTT_MILLIS)
                    .detail("wait p50", "the acquire (lock()) alone");
        } finally {
            clients.forEach(LockLibrary::close);
            proxies.forEach(FaultProxy::close);
        }
    }
}
