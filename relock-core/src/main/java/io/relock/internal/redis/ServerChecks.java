package io.relock.internal.redis;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What the client checks of the server once it is connected: the version, WAIT, the eviction policy. */
final class ServerChecks {

    private static final Logger LOG = LoggerFactory.getLogger(ServerChecks.class);

    private ServerChecks() {}

    /** The major version in {@code INFO server}, 0 when it cannot be read. */
    static int majorVersion(String info) {
        String version = infoField(info, "redis_version");
        if (version == null) {
            return 0;
        }
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        return null;
    }

    /** Replica sync is on: the server must accept {@code WAIT}. */
    static void requireWait(RedisClusterAsyncCommands<String, String> commands) {
        try {
            Futures.await(commands.waitForReplication(0, 1).toCompletableFuture(), "WAIT");
        } catch (RuntimeException e) {
            throw new IllegalStateException("replicaSync is on but the server refuses WAIT (a managed Redis may "
                    + "not offer it); turn replicaSync off or use a server that has it: "
                    + Exceptions.unwrap(e).getMessage(), e);
        }
    }

    /**
     * Warns once when the server may evict lock keys: every lock key has a TTL, so a
     * {@code volatile-*} policy picks them first, and an {@code allkeys-*} policy may pick them
     * too. An evicted key is a released lock while its holder works on (the watchdog reports it
     * as lost at its next renewal, too late).
     */
    static void warnOnEviction(RedisClusterAsyncCommands<String, String> commands, String target) {
        String policy;
        try {
            policy = infoField(Futures.await(commands.info("memory").toCompletableFuture(), "read INFO memory"),
                    "maxmemory_policy");
        } catch (RuntimeException e) {
            LOG.debug("cannot read the maxmemory-policy of {} ({}); not checked", target, e.getMessage());
            return;
        }
        if (policy != null && !policy.equals("noeviction")) {
            LOG.warn("Redis at {} has maxmemory-policy '{}': when it reaches maxmemory it may evict lock keys "
                    + "(they have a TTL), which releases locks while their holders still work; use 'noeviction' "
                    + "for the Redis that holds locks", target, policy);
        }
    }
}
