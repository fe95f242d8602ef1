package io.relock.bench;

import java.util.List;

/**
 * One scenario of the bench, run inside a worker JVM for one library. Its cases (thread
 * counts, waiters, clients) run one after the other in that JVM, each with a fresh client.
 */
interface Scenario {

    /** {@code S1} … {@code S7}. */
    String id();

    /** What it measures, for the report. */
    String title();

    /** The case ids, {@code <scenario>/<case>}, in the order they run; fewer with {@code --quick}. */
    List<String> cases(boolean quick);

    /**
     * The order in which one worker runs {@code cases} in {@code repeat}: as given by default. A
     * scenario whose cases are compared with each other (not only between libraries) alternates
     * them, so that neither always runs in the warmer JVM.
     */
    default List<String> order(List<String> cases, int repeat) {
        return cases;
    }

    /**
     * The phases of {@code caseId}: {@code given} (the run's flags) unless the scenario shortens
     * a case to keep the whole run within its time.
     */
    default Load.Timing timing(String caseId, Load.Timing given) {
        return given;
    }

    /**
     * Why {@code library} has nothing to measure in {@code caseId} (it has no such lock type or
     * feature), or null when it runs the case. The bench does not run the case for it (and starts
     * no worker for it when that leaves no case) and reports it as not available, with this
     * reason. A worker that finds a lock type missing at run time reports the same way.
     */
    default String without(String caseId, Library library) {
        return null;
    }

    /**
     * The other libraries whose clients run in the same worker as this one's in {@code caseId},
     * each reported with its own result ({@link CaseResult#beside}); empty by default. Such a
     * library is not run in a worker of its own for the case ({@link #without} says so), and is
     * not reported as not available.
     */
    default List<Library> beside(String caseId) {
        return List.of();
    }

    /** Runs one case and describes what it measured; failures go into the result, not thrown. */
    CaseResult run(String caseId, WorkerContext context) throws Exception;

    /** Every scenario that runs in a worker (S0, the ceiling, runs in the driver). */
    static List<Scenario> all() {
        return List.of(new S1Uncontended(), new S2Contended(), new S3HandOff(), new S4FairAndRedLock(),
                new S5Footprint(), new S6MixedFleet(), new S7Reactive());
    }

    static Scenario byId(String id) {
        return all().stream().filter(scenario -> scenario.id().equalsIgnoreCase(id)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no scenario " + id));
    }
}
