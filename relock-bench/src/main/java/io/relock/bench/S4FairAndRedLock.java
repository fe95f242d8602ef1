package io.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * S4, the heavier lock types: a fair lock's cost per acquisition with 1, 10 and 100 waiters
 * (waiters + 1 threads contending on one name, with the S2 critical-section checks), and a
 * RedLock over five independent masters at 8 threads, each thread its own name. A library
 * version without the lock type reports the case as not available; RedisLockRegistry, which
 * has neither, does not run this scenario.
 */
final class S4FairAndRedLock implements Scenario {

    static final int REDLOCK_THREADS = 8;

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
        return quick ? List.of("S4/fair10", "S4/redlock") : List.of("S4/fair1", "S4/fair10", "S4/fair100", "S4/redlock");
    }

    /** Spring Integration's lock registries have neither a fair lock nor a RedLock. */
    @Override
    public String without(String caseId, Library library) {
        return library == Library.REGISTRY ? "no fair lock and no RedLock in Spring Integration" : null;
    }

    @Override
    public CaseResult run(String caseId, WorkerContext context) {
        return caseId.equals("S4/redlock") ? redLock(caseId, context) : fair(caseId, context);
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
}
