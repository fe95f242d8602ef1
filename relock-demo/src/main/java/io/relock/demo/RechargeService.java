package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.spring.RelockLocks;
import io.relock.spring.WithLock;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * Seed 000's recharge service on SQL: pays an order into its account once, and answers "already
 * paid" when the order is paid. Retries of the same request (a client that timed out, a message
 * delivered twice) must not credit the account twice.
 *
 * <p>Every form runs the seed's check-then-act in one {@code READ COMMITTED} transaction: read
 * the order's status, and if it is {@code NEW}, credit the account and mark the order paid. Two
 * transactions that both read {@code NEW} both credit; the forms differ only in the lock around
 * that, which is the point of scenario 2a. Each instance's connection pool sets the isolation on
 * every connection it opens, so that H2, PostgreSQL and MariaDB (whose default is
 * {@code REPEATABLE READ}) behave the same; the methods keep the connection's isolation rather
 * than naming one, because Spring would then read the connection's isolation at every
 * transaction, and H2 over TCP answers that read with an internal error now and then while
 * other sessions commit.
 *
 * <p>A Spring bean: the methods are public and the class is not final so that Spring can proxy
 * them for {@link Transactional} and {@link WithLock}.
 */
public class RechargeService {

    /** What one call did. */
    public enum Outcome {
        /** The order was {@code NEW}: the account was credited and the order marked paid. */
        CREDITED,
        /** The order was already paid: nothing changed. */
        ALREADY_PAID,
        /** The fenced write was refused: a holder with a larger token had written the order. */
        FENCED_OFF
    }

    /** What a fenced call did, and with which token. */
    public record FencedOutcome(Outcome outcome, long token) {}

    private final JdbcTemplate jdbc;
    private final Relock relock;
    private final String selectOrder;
    private final String credit;
    private final String markPaid;
    private final String markPaidFenced;

    /**
     * @param jdbc this instance's database access
     * @param relock this instance's Relock client, for the seed's hand-written lock
     * @param tables the run's tables
     */
    public RechargeService(JdbcTemplate jdbc, Relock relock, RechargeDatabase.Tables tables) {
        this.jdbc = jdbc;
        this.relock = relock;
        this.selectOrder = "SELECT status, account_id FROM " + tables.orders() + " WHERE id = ?";
        this.credit = "UPDATE " + tables.account() + " SET balance = balance + ? WHERE id = ?";
        this.markPaid = "UPDATE " + tables.orders() + " SET status = 'PAID' WHERE id = ?";
        this.markPaidFenced = "UPDATE " + tables.orders() + " SET status = 'PAID', fence_token = ?"
                + " WHERE id = ? AND fence_token < ?";
    }

    /** Run 1: no lock at all. */
    @Transactional
    public Outcome rechargeWithoutLock(String orderId, long amount) {
        return creditIfNew(orderId, amount);
    }

    /**
     * Run 2, the seed's shape: the lock is taken and released inside the transactional method, so
     * {@code unlock()} runs before the transaction commits. Between the two, the next retry can
     * take the lock and read the order as {@code NEW}: the payment is written but not committed.
     */
    @Transactional
    public Outcome rechargeLockInsideTransaction(String orderId, long amount) {
        DistributedLock lock = relock.getLock("order_" + orderId);
        lock.lock();
        try {
            return creditIfNew(orderId, amount);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Run 3: {@link WithLock} takes the lock before the transaction begins and releases it after
     * the commit, so the next retry reads what this one committed.
     */
    @WithLock(name = "recharge", key = "#orderId", waitTime = "10s")
    @Transactional
    public Outcome recharge(String orderId, long amount) {
        return creditIfNew(orderId, amount);
    }

    /**
     * Scenario 2b: a fenced lock; the order is marked paid only with a token larger than every
     * token that wrote it before, and the account is credited only if that write went through.
     */
    @WithLock(name = "recharge-fenced", key = "#orderId", type = WithLock.Type.FENCED, waitTime = "10s")
    @Transactional
    public FencedOutcome rechargeFenced(String orderId, long amount) {
        long token = RelockLocks.current().token();
        Order order = order(orderId);
        if (!order.isNew()) {
            return new FencedOutcome(Outcome.ALREADY_PAID, token);
        }
        if (jdbc.update(markPaidFenced, token, orderId, token) == 0) {
            return new FencedOutcome(Outcome.FENCED_OFF, token);
        }
        jdbc.update(credit, amount, order.accountId());
        return new FencedOutcome(Outcome.CREDITED, token);
    }

    /** The seed's check-then-act; nothing in the database stops two transactions that both read NEW. */
    private Outcome creditIfNew(String orderId, long amount) {
        Order order = order(orderId);
        if (!order.isNew()) {
            return Outcome.ALREADY_PAID;
        }
        jdbc.update(credit, amount, order.accountId());
        jdbc.update(markPaid, orderId);
        return Outcome.CREDITED;
    }

    /** A plain read, no {@code FOR UPDATE}: as the seed's mapper reads the order. */
    private Order order(String orderId) {
        return jdbc.queryForObject(selectOrder,
                (row, number) -> new Order(row.getString("status"), row.getString("account_id")), orderId);
    }

    /** The columns of an order that the service reads. */
    private record Order(String status, String accountId) {

        boolean isNew() {
            return "NEW".equals(status);
        }
    }
}
