package com.example.billing;

import io.relock.spring.WithLock;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Mono;

/** Credits an order's amount once, however many retries of it arrive at once. */
@Service
class RechargeService {

    private final DatabaseClient db;

    RechargeService(DatabaseClient db) {
        this.db = db;
    }

    // tag::reactive-recharge-service[]
    @WithLock(name = "recharge", key = "#orderId", waitTime = "5s")
    @Transactional
    public Mono<Boolean> recharge(String orderId, long amount) {
        return db.sql("SELECT status FROM orders WHERE id = :id").bind("id", orderId)
                .map(row -> row.get("status", String.class)).one()
                .flatMap(status -> !"NEW".equals(status) ? Mono.just(false)
                        : db.sql("UPDATE account SET balance = balance + :amount WHERE id = 'alice'")
                                .bind("amount", amount).fetch().rowsUpdated()
                                .then(db.sql("UPDATE orders SET status = 'PAID' WHERE id = :id")
                                        .bind("id", orderId).fetch().rowsUpdated())
                                .thenReturn(true));
    }
    // end::reactive-recharge-service[]
}
