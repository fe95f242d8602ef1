package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.Relock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Seed 000's order recharge: ten concurrent retries of "pay order 1 (5) into account 1". Run
 * first as the bare service, then with the service's check-and-credit inside
 * {@code relock.getLock("order:1")}, each retry on its own Relock client as if ten instances
 * of the service had received it.
 */
final class IdempotentRecharge implements Scenario {

    static final String TITLE = "Seed 000: an order recharge made idempotent by a lock";

    private static final int RETRIES = 10;
    private static final int ORDER_ID = 1;
    private static final int ACCOUNT_ID = 1;
    private static final long AMOUNT = 5;
    private static final Duration MIN_WORK = Duration.ofMillis(10);
    private static final Duration MAX_WORK = Duration.ofMillis(50);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final DemoRedis redis;
    private final Ledger ledger;
    private final RechargeService service;

    IdempotentRecharge(DemoRedis redis) {
        this.redis = redis;
        this.ledger = new Ledger(redis.commands(), redis.keyPrefix() + "ledger:");
        this.service = new RechargeService(ledger, MIN_WORK, MAX_WORK);
    }

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return RETRIES + " concurrent retries of recharge(order " + ORDER_ID + ", " + AMOUNT + ") credit the account"
                + " once with the lock, several times without it.";
    }

    @Override
    public void run(Report.Section section) throws Exception {
        section.figure("the order", "order " + ORDER_ID + ", " + AMOUNT + " into account " + ACCOUNT_ID
                + ", unpaid; payment step " + MIN_WORK.toMillis() + "-" + MAX_WORK.toMillis() + " ms");

        openOrder();
        Tally bare = retryConcurrently(retry -> service.recharge(ORDER_ID, AMOUNT));
        long bareBalance = ledger.balance(ACCOUNT_ID);
        report(section, "without a lock", bare, bareBalance);

        openOrder();
        List<Relock> instances = startInstances();
        Tally locked = retryConcurrently(retry -> rechargeUnderLock(instances.get(retry), ORDER_ID, AMOUNT));
        long lockedBalance = ledger.balance(ACCOUNT_ID);
        instances.forEach(Relock::close);
        report(section, "with the lock (" + RETRIES + " clients)", locked, lockedBalance);

        if (bare.credited() <= 1) {
            section.note("note: without the lock the race did not show this time (" + bare.credited()
                    + " credit); the comparison proves less on this run.");
        }
        boolean passed = locked.finished() && locked.errors().isEmpty() && locked.credited() == 1
                && locked.alreadyProcessed() == RETRIES - 1 && lockedBalance == AMOUNT;
        section.verdict(passed,
                "with the lock the order was credited exactly once (balance " + lockedBalance + ") across "
                        + RETRIES + " clients; without it " + bare.credited() + " times (balance " + bareBalance + ")",
                "with the lock: credited " + locked.credited() + " times, balance " + lockedBalance
                        + " (expected once, " + AMOUNT + "), errors: " + locked.errors());
    }

    /**
     * The fix from seed 000: the whole check-and-credit runs under the order's lock, so a retry
     * either does all of it or finds the order paid. The lock waits (no lease: the watchdog
     * keeps it while the payment step runs, however long that takes).
     */
    private RechargeService.Outcome rechargeUnderLock(Relock instance, int orderId, long amount)
            throws InterruptedException {
        DistributedLock lock = instance.getLock("order:" + orderId);
        lock.lock();
        try {
            return service.recharge(orderId, amount);
        } finally {
            lock.unlock();
        }
    }

    private void openOrder() {
        ledger.open(new Ledger.Order(ORDER_ID, ACCOUNT_ID, AMOUNT, Ledger.Status.UNPAID), 0);
    }

    private List<Relock> startInstances() {
        List<Relock> instances = new ArrayList<>();
        for (int i = 0; i < RETRIES; i++) {
            instances.add(redis.newClient());
        }
        return instances;
    }

    /** One retry of the request, as one thread of one service instance runs it. */
    @FunctionalInterface
    private interface Retry {
        RechargeService.Outcome run(int retry) throws Exception;
    }

    /** What the retries did: how many credited, how many found the order paid, what failed. */
    private record Tally(int credited, int alreadyProcessed, List<Throwable> errors, boolean finished) {}

    /** Runs {@link #RETRIES} retries from as many threads, released by one start gate. */
    private static Tally retryConcurrently(Retry retry) throws InterruptedException {
        AtomicInteger credited = new AtomicInteger();
        AtomicInteger alreadyProcessed = new AtomicInteger();
        Crowd crowd = Crowd.gather("retry", RETRIES, index -> {
            switch (retry.run(index)) {
                case CREDITED -> credited.incrementAndGet();
                case ALREADY_PROCESSED -> alreadyProcessed.incrementAndGet();
            }
        });
        crowd.open();
        boolean finished = crowd.awaitFinished(TIMEOUT);
        return new Tally(credited.get(), alreadyProcessed.get(), crowd.errors(), finished);
    }

    private static void report(Report.Section section, String label, Tally tally, long balance) {
        long lostUpdates = tally.credited() - balance / AMOUNT;
        section.figure(label, "credited " + tally.credited() + "x, \"already processed\" "
                + tally.alreadyProcessed() + "x" + (tally.errors().isEmpty() ? "" : ", " + tally.errors().size()
                + " errors (first: " + tally.errors().get(0) + ")"));
        section.figure("  balance afterwards", balance + " (should be " + AMOUNT + ")"
                + (lostUpdates == 1 ? "; 1 credit was overwritten by another" : "")
                + (lostUpdates > 1 ? "; " + lostUpdates + " credits were overwritten by others" : ""));
    }
}
