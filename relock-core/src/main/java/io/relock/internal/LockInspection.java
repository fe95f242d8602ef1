package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import io.relock.ClientInfo;
import io.relock.LockInfo;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.redis.RedisGateway;
import io.relock.internal.redis.Script;
import io.relock.internal.support.Futures;
import io.relock.internal.types.LockTypes;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * What {@code Relock.getLockInfo} reads of one lock, in one pipelined batch: its holders and
 * their counts, its lease, its kind ({@code lock_info.lua}), how many clients wait on its
 * channels, and the registry entries of the holders' clients.
 */
final class LockInspection {

    private LockInspection() {}

    /** The lock named {@code name}, whose key is {@code key}. */
    static LockInfo read(RedisGateway gateway, ClientRegistry registry, String name, String key) {
        CompletableFuture<List<Object>> snapshot = gateway.eval(Script.LOCK_INFO, ScriptOutputType.MULTI,
                new String[] {key, LockKeys.ownKey(key, "queue"), LockKeys.ownKey(key, "timeouts"),
                    LockKeys.ownKey(key, "token")});
        // Waiters of every lock type that can live under this key.
        CompletableFuture<Map<String, Long>> subscribers = gateway.subscribers(LockTypes.channels(key));
        String operation = "read lock info of '" + name + "'";
        List<Object> reply = Futures.await(snapshot, operation);
        List<?> fields = (List<?>) reply.get(0);
        Map<String, Long> counts = new LinkedHashMap<>();
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            counts.put(String.valueOf(fields.get(i)), parse(String.valueOf(fields.get(i + 1))));
        }
        long remaining = ((Number) reply.get(1)).longValue();
        // Fields are <clientId>:<owner>[:suffix]; Redisson's client ids are UUIDs too, and find no entry.
        Set<String> clientIds = new LinkedHashSet<>();
        for (String holder : counts.keySet()) {
            int colon = holder.indexOf(':');
            if (colon > 0) {
                clientIds.add(holder.substring(0, colon));
            }
        }
        CompletableFuture<Map<String, ClientInfo>> clients = registry.lookUp(clientIds);
        long waiters = Futures.await(subscribers, operation).values().stream()
                .mapToLong(Long::longValue).sum();
        return new LockInfo(name, counts, remaining, waiters, Futures.await(clients, operation),
                LockTypes.kindOf(String.valueOf(reply.get(2))));
    }

    private static long parse(String count) {
        try {
            return Long.parseLong(count);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
