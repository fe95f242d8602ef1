package io.relock.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Seed 000's recharge on a SQL database, run four ways side by side: ten concurrent retries of
 * one order arrive on several service instances (Spring contexts, each its own Relock client),
 * round after round, each round a new order into a new account at balance 0.
 * <ol>
 *   <li>no lock: every retry that reads the order before the first commit credits it;</li>
 *   <li>the seed's shape, a lock taken and released inside the {@code @Transactional} method:
 *       released before the commit, so a retry can still read the order as NEW;</li>
 *   <li>{@code @WithLock} on the method: released after the commit; credited exactly once;</li>
 *   <li>{@code @WithLock} on the reactive form, a {@code @Transactional} method returning a
 *       {@code Mono} on R2DBC: held by the subscription from before the reactive transaction
 *       begins until after it committed; credited exactly once. Only on the demo's own H2, the
 *       one database whose R2DBC driver the demo carries; skipped on a user's database.</li>
 * </ol>
 */
final class RechargeRace implements Scenario {

    static final String TITLE = "Seed 000: the recharge service on a SQL database, four ways";

    static final int INSTANCES = 3;
    static final int RETRIES = 10;
    static final long AMOUNT = 100;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final DemoRedis redis;
    private final RechargeDatabase database;
    private final int rounds;

    /** How one run calls the service. */
    private enum Run {
        NO_LOCK("1) no lock"),
        LOCK_INSIDE("2) lock inside @Transactional"),
        WITH_LOCK("3) @WithLock"),
        WITH_LOCK_ON_MONO("4) @WithLock on Mono (R2DBC)");

        final String label;

        Run(String label) {
            this.label = label;
        }

        /**
         * One retry on instance {@code index}. The reactive run subscribes to the service's
         * {@code Mono} and waits for its outcome on the retry's own thread, as a blocking caller
         * of a reactive service would; inside the pipeline nothing blocks on the lock.
         */
        RechargeService.Outcome call(ServiceInstances instances, int index, String orderId) {
            return switch (this) {
                case NO_LOCK -> instances.service(index).rechargeWithoutLock(orderId, AMOUNT);
                case LOCK_INSIDE -> instances.service(index).rechargeLockInsideTransaction(orderId, AMOUNT);
                case WITH_LOCK -> instances.service(index).recharge(orderId, AMOUNT);
                case WITH_LOCK_ON_MONO -> instances.reactiveService(index).recharge(orderId, AMOUNT).block(TIMEOUT);
            };
        }
    }

    /** One round: how many retries credited, the balance afterwards, what failed. */
    private record Round(int credits, long balance, List<Throwable> errors, boolean finished) {}

    /** All rounds of one run. */
    private record Tally(List<Round> rounds) {

        long roundsCreditedOnce() {
            return rounds.stream().filter(round -> round.credits() == 1 && round.balance() == AMOUNT).count();
        }

        long roundsCreditedMore() {
            return rounds.stream().filter(round -> round.credits() > 1).count();
        }

        long extraCredits() {
            return rounds.stream().mapToLong(round -> Math.max(0, round.credits() - 1)).sum();
        }

        Round worst() {
            return rounds.stream().reduce((a, b) -> b.credits() > a.credits() ? b : a).orElseThrow();
        }

        List<Throwable> errors() {
            return rounds.stream().flatMap(round -> round.errors().stream()).toList();
        }

        boolean finished() {
            return rounds.stream().allMatch(Round::finished);
        }
    }

    /**
     * @param rounds how many rounds of {@link #RETRIES} retries each run makes
     */
    RechargeRace(DemoRedis redis, RechargeDatabase database, int rounds) {
        this.redis = redis;
        this.database = database;
        this.rounds = rounds;
    }

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return RETRIES + " concurrent retries of recharge(order, " + AMOUNT + ") on " + INSTANCES
                + " service instances: credited several times without a lock, sometimes twice with the lock inside"
                + " @Transactional, exactly once with @WithLock, on a blocking method and on one returning a Mono.";
    }

    @Override
    public void run(Report.Section section) throws Exception {
        section.figure("service instances", INSTANCES + " Spring contexts, each with its own Relock client,"
                + " connection pool and transaction manager" + (database.reactive()
                        ? " (and for run 4 its R2DBC connections and reactive transaction manager)" : ""));
        section.figure("each round", "a new order of " + AMOUNT + " into a new account at balance 0; " + RETRIES
                + " retries released together, retry i on instance i mod " + INSTANCES);
        section.figure("transactions", "READ COMMITTED; the service reads the status, then credits and marks paid");
        section.figure("commit latency", database.commitLatency().isZero()
                ? "the database's own (none added)"
                : database.commitLatency().toMillis() + " ms added before every commit, as a remote database's"
                        + " round trip (in-process H2 commits in microseconds)");

        Map<Run, Tally> tallies = new EnumMap<>(Run.class);
        try (ServiceInstances instances = ServiceInstances.start(INSTANCES, redis, database)) {
            for (Run run : Run.values()) {
                if (run == Run.WITH_LOCK_ON_MONO && !database.reactive()) {
                    section.figure(run.label, "skipped: it needs the demo's own H2; the demo carries no R2DBC"
                            + " driver for the database given with --jdbc (" + database.product() + ")");
                    continue;
                }
                Tally tally = runRounds(instances, run);
                tallies.put(run, tally);
                report(section, run, tally);
            }
        }
        Tally noLock = tallies.get(Run.NO_LOCK);
        Tally lockInside = tallies.get(Run.LOCK_INSIDE);
        Tally withLock = tallies.get(Run.WITH_LOCK);
        Tally onMono = tallies.get(Run.WITH_LOCK_ON_MONO);

        if (noLock.roundsCreditedMore() == 0) {
            section.note("run 1: double credits not reproduced this time (every round credited once).");
        }
        section.note(lockInside.roundsCreditedMore() == 0
                ? "run 2: no double credit observed in " + rounds + " rounds on this machine, but the window is real:"
                : "run 2: a retry read the order as NEW and credited again in " + lockInside.roundsCreditedMore()
                        + " of " + rounds + " rounds, because");
        section.note("  unlock() runs in a finally inside the method, before the transaction commits; the next retry"
                + " takes the lock,");
        section.note("  reads the order under READ COMMITTED while the payment is written but not committed, sees NEW,"
                + " and credits again.");
        if (!database.commitLatency().isZero()) {
            section.note("  The " + database.commitLatency().toMillis() + " ms added to each commit widens that window;"
                    + " without it, it lasts as long as the commit itself.");
        }
        section.note("run 3: @WithLock takes the lock before the transaction begins and releases it after the commit.");
        if (onMono != null) {
            section.note("run 4: the same @WithLock on a @Transactional method returning a Mono, on R2DBC (the same H2,"
                    + " R2dbcTransactionManager):");
            section.note("  each subscription takes the lock, then the reactive transaction begins; the lock is released"
                    + " after the commit.");
            section.note("  The holder is the subscription, not a thread: a waiting retry holds no thread of the service.");
        } else {
            section.note("run 4 (@WithLock on a Mono, R2DBC) runs on the demo's own H2 only: without --jdbc.");
        }

        boolean clean = tallies.values().stream().allMatch(tally -> tally.finished() && tally.errors().isEmpty());
        List<String> shortfalls = new ArrayList<>();
        for (Run run : List.of(Run.WITH_LOCK, Run.WITH_LOCK_ON_MONO)) {
            Tally tally = tallies.get(run);
            if (tally != null && tally.roundsCreditedOnce() != rounds) {
                shortfalls.add(run.label + " credited exactly once in only " + tally.roundsCreditedOnce() + " of "
                        + rounds + " rounds (worst: " + tally.worst().credits() + " credits, balance "
                        + tally.worst().balance() + ")");
            }
        }
        section.verdict(clean && shortfalls.isEmpty(),
                "with @WithLock " + (onMono != null ? "(blocking and on a Mono) " : "") + "every one of " + rounds
                        + " rounds credited exactly once (balance " + AMOUNT + ")"
                        + (onMono != null ? "" : "; run 4 skipped"),
                String.join("; ", shortfalls) + (shortfalls.isEmpty() ? "" : "; ") + "errors: " + firstErrors(tallies));
    }

    private Tally runRounds(ServiceInstances instances, Run run) throws InterruptedException {
        List<Round> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            String orderId = run.name().toLowerCase(Locale.ROOT) + "-" + round;
            String accountId = "account-" + orderId;
            database.openOrder(orderId, accountId);
            AtomicInteger credits = new AtomicInteger();
            Crowd crowd = Crowd.gather("retry", RETRIES, retry -> {
                if (run.call(instances, retry % instances.size(), orderId) == RechargeService.Outcome.CREDITED) {
                    credits.incrementAndGet();
                }
            });
            crowd.open();
            boolean finished = crowd.awaitFinished(TIMEOUT);
            results.add(new Round(credits.get(), database.balance(accountId), crowd.errors(), finished));
        }
        return new Tally(results);
    }

    private void report(Report.Section section, Run run, Tally tally) {
        String outcome;
        if (tally.roundsCreditedMore() == 0) {
            outcome = "credited exactly once (balance " + AMOUNT + ") in " + tally.roundsCreditedOnce() + " of " + rounds
                    + " rounds";
        } else {
            Round worst = tally.worst();
            outcome = "credited more than once in " + tally.roundsCreditedMore() + " of " + rounds + " rounds ("
                    + tally.extraCredits() + " extra credits); worst round: " + worst.credits() + " credits, balance "
                    + worst.balance();
        }
        List<Throwable> errors = tally.errors();
        section.figure(run.label, outcome + (errors.isEmpty() ? "" : "; " + errors.size() + " errors (first: "
                + Report.describe(errors.get(0)) + ")") + (tally.finished() ? "" : "; some retries did not finish in " + TIMEOUT));
    }

    private static String firstErrors(Map<Run, Tally> tallies) {
        return tallies.values().stream().flatMap(tally -> tally.errors().stream()).limit(3).map(Report::describe).toList()
                .toString();
    }
}
