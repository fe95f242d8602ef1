package io.relock.demo;

import java.time.Duration;

/**
 * Seed 000's recharge service, without its lock: pays an order into its account once, and
 * answers "already processed" when the order is paid. Retries of the same request (a client
 * that timed out, a message delivered twice) must not credit the account twice.
 *
 * <p>Check, work, credit, mark paid: each step is a separate call to the ledger, so two
 * concurrent retries can both see the order unpaid and both credit it. The caller must make
 * the whole method exclusive per order; {@link IdempotentRecharge} does it with a lock.
 */
final class RechargeService {

    /** What one call did. */
    enum Outcome { CREDITED, ALREADY_PROCESSED }

    private final Ledger ledger;
    private final Duration minWork;
    private final Duration maxWork;

    /**
     * @param ledger where orders and balances live
     * @param minWork shortest time the payment step takes
     * @param maxWork longest time the payment step takes
     */
    RechargeService(Ledger ledger, Duration minWork, Duration maxWork) {
        this.ledger = ledger;
        this.minWork = minWork;
        this.maxWork = maxWork;
    }

    /**
     * Credits {@code amount} to the order's account if the order is unpaid, and marks it paid.
     *
     * @return {@link Outcome#CREDITED}, or {@link Outcome#ALREADY_PROCESSED} if it was paid
     * @throws InterruptedException if interrupted during the payment step
     */
    Outcome recharge(int orderId, long amount) throws InterruptedException {
        Ledger.Order order = ledger.order(orderId);
        if (order.status() == Ledger.Status.PAID) {
            return Outcome.ALREADY_PROCESSED;
        }
        // Talk to the payment provider: the window in which a concurrent retry still sees "unpaid".
        SimulatedWork.takesBetween(minWork, maxWork);
        long balance = ledger.balance(order.accountId());
        ledger.setBalance(order.accountId(), balance + amount);
        ledger.markPaid(orderId);
        return Outcome.CREDITED;
    }
}
