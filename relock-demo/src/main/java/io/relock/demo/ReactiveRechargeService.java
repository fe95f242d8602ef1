package io.relock.demo;

import io.relock.spring.WithLock;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Mono;

/**
 * Seed 000's recharge, reactive: the same check-then-act as {@link RechargeService#recharge},
 * as a WebFlux service would write it, on R2DBC with Spring's reactive transactions. The method
 * returns a {@code Mono}; {@link WithLock} holds the lock for that {@code Mono}'s lifetime, not
 * for the call: it is taken when the {@code Mono} is subscribed, before the reactive transaction
 * begins, and released after the transaction committed. The owner is the subscription, not a
 * thread; no thread blocks while a retry waits for the lock.
 *
 * <p>A Spring bean: the method is public and the class is not final so that Spring can proxy
 * it. Its transactions go through the instance's reactive transaction manager, named
 * {@value #TRANSACTION_MANAGER}, next to the JDBC one of {@link RechargeService}.
 */
public class ReactiveRechargeService {

    /** The bean name of the reactive transaction manager that {@link #recharge} uses. */
    static final String TRANSACTION_MANAGER = "reactiveTransactionManager";

    private final DatabaseClient db;
    private final String selectOrder;
    private final String credit;
    private final String markPaid;

    /**
     * @param db this instance's R2DBC access
     * @param tables the run's tables
     */
    public ReactiveRechargeService(DatabaseClient db, RechargeDatabase.Tables tables) {
        this.db = db;
        this.selectOrder = "SELECT status, account_id FROM " + tables.orders() + " WHERE id = :id";
        this.credit = "UPDATE " + tables.account() + " SET balance = balance + :amount WHERE id = :account";
        this.markPaid = "UPDATE " + tables.orders() + " SET status = 'PAID' WHERE id = :id";
    }

    /**
     * Run 4: the lock of run 3 (the same name, so a blocking and a reactive retry of one order
     * would exclude each other too), held by the returned {@code Mono} from before its
     * transaction begins until after it committed.
     *
     * @return {@link RechargeService.Outcome#CREDITED} or {@link RechargeService.Outcome#ALREADY_PAID};
     *     errors with the lock's {@code LockNotAcquiredException} if it is not held within 10 s
     */
    @WithLock(name = "recharge", key = "#orderId", waitTime = "10s")
    @Transactional(transactionManager = TRANSACTION_MANAGER, isolation = Isolation.READ_COMMITTED)
    public Mono<RechargeService.Outcome> recharge(String orderId, long amount) {
        // The seed's check-then-act: a plain read, no FOR UPDATE; nothing but the lock keeps two
        // retries from both reading NEW.
        return db.sql(selectOrder).bind("id", orderId)
                .map(row -> new Order(row.get("status", String.class), row.get("account_id", String.class)))
                .one()
                .flatMap(order -> !order.isNew() ? Mono.just(RechargeService.Outcome.ALREADY_PAID)
                        : db.sql(credit).bind("amount", amount).bind("account", order.accountId()).fetch().rowsUpdated()
                                .then(db.sql(markPaid).bind("id", orderId).fetch().rowsUpdated())
                                .thenReturn(RechargeService.Outcome.CREDITED));
    }

    /** The columns of an order that the service reads. */
    private record Order(String status, String accountId) {

        boolean isNew() {
            return "NEW".equals(status);
        }
    }
}
