package io.relock.demo;

import io.lettuce.core.api.sync.RedisCommands;
import java.util.Map;

/**
 * The recharge scenario's "database": orders and account balances, kept in Redis hashes and
 * read and written with plain commands, one at a time, the way a service reads a row and
 * writes it back. Nothing here is atomic across calls; that is the point of the scenario.
 *
 * <p>Keys: {@code <prefix>order:<id>} (fields {@code account}, {@code amount}, {@code status})
 * and {@code <prefix>account:<id>} (field {@code balance}).
 */
final class Ledger {

    /** An order's payment status. */
    enum Status { UNPAID, PAID }

    /** One order: which account it credits, by how much, and whether that was done. */
    record Order(int id, int accountId, long amount, Status status) {}

    private final RedisCommands<String, String> redis;
    private final String prefix;

    /**
     * @param redis the connection (thread-safe)
     * @param prefix put before every key, so each demo run has its own ledger
     */
    Ledger(RedisCommands<String, String> redis, String prefix) {
        this.redis = redis;
        this.prefix = prefix;
    }

    /** Starts afresh: the order, unpaid, and its account with the given balance. */
    void open(Order order, long balance) {
        redis.del(orderKey(order.id()), accountKey(order.accountId()));
        redis.hset(orderKey(order.id()), Map.of(
                "account", Integer.toString(order.accountId()),
                "amount", Long.toString(order.amount()),
                "status", order.status().name()));
        redis.hset(accountKey(order.accountId()), "balance", Long.toString(balance));
    }

    /** Reads an order. */
    Order order(int id) {
        Map<String, String> fields = redis.hgetall(orderKey(id));
        if (fields.isEmpty()) {
            throw new IllegalStateException("no order " + id);
        }
        return new Order(id, Integer.parseInt(fields.get("account")), Long.parseLong(fields.get("amount")),
                Status.valueOf(fields.get("status")));
    }

    /** Marks an order paid. */
    void markPaid(int orderId) {
        redis.hset(orderKey(orderId), "status", Status.PAID.name());
    }

    /** Reads an account's balance. */
    long balance(int accountId) {
        String balance = redis.hget(accountKey(accountId), "balance");
        if (balance == null) {
            throw new IllegalStateException("no account " + accountId);
        }
        return Long.parseLong(balance);
    }

    /** Overwrites an account's balance. */
    void setBalance(int accountId, long balance) {
        redis.hset(accountKey(accountId), "balance", Long.toString(balance));
    }

    private String orderKey(int id) {
        return prefix + "order:" + id;
    }

    private String accountKey(int id) {
        return prefix + "account:" + id;
    }
}
