package io.relock.internal.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the watchdog ({@code lease.Watchdog}) needs of Redis, and nothing more: besides the
 * write path, where a key lives and one batched renewal call. {@link RedisGateway} implements it; a unit test
 * answers it by hand, so the watchdog's rules run without a server.
 */
public interface RenewalGateway extends WriteGateway {

    /** The hash slot of {@code key}: one renewal call may only touch keys of one slot. */
    int slotOf(String key);

    /**
     * Runs a renew script on a batch: {@code keys[i]} with owner field {@code args[i + 1]},
     * {@code args[0]} the lease. The reply holds 1 for each hold renewed, 0 for each found gone.
     */
    CompletableFuture<List<Object>> renew(Script script, String[] keys, String[] args);
}
