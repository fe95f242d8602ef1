package io.relock.internal.backend;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the watchdog ({@code lease.Watchdog}) needs of a back end, and nothing more: besides the
 * write path, where a key lives and one batched renewal call. Redis's gateway implements it; a
 * unit test answers it by hand, so the watchdog's rules run without a server.
 */
public interface RenewalGateway extends WriteGateway {

    /** The hash slot of {@code key}: one renewal call may only touch keys of one slot (0 where the store has no slots). */
    int slotOf(String key);

    /**
     * Renews a batch of holds: {@code keys[i]} with owner field {@code args[i + 1]},
     * {@code args[0]} the lease. The reply holds 1 for each hold renewed, 0 for each found gone.
     */
    CompletableFuture<List<Object>> renew(Renewal renewal, String[] keys, String[] args);
}
