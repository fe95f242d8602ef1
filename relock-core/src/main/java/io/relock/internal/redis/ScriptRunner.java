package io.relock.internal.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.relock.RelockException;
import io.relock.internal.backend.Budget;
import io.relock.internal.support.Exceptions;
import io.relock.internal.support.Futures;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the lock scripts: preloaded at connect, then by EVALSHA with a fall back to EVAL (which
 * caches the script again) when a server answers NOSCRIPT, e.g. after a restart, a failover or
 * on a new node. Retries go through the {@link RetryLoop}, and each run tells its script whether
 * it may repeat one that took effect.
 */
final class ScriptRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ScriptRunner.class);

    private final RedisClusterAsyncCommands<String, String> commands;
    private final boolean sharded;
    private final boolean clustered;
    private final RetryLoop retries;

    ScriptRunner(Connected connected, RetryLoop retries) {
        this.commands = connected.commands;
        this.sharded = connected.sharded;
        this.clustered = connected.cluster != null;
        this.retries = retries;
    }

    /** Loads every script, checking that the server computes the SHA the client uses. */
    void preload() {
        for (Script script : Script.values()) {
            String sha;
            try {
                sha = Futures.await(commands.scriptLoad(script.source(sharded)).toCompletableFuture(),
                        "load script " + script);
            } catch (RelockException e) {
                // In a cluster Lettuce sends SCRIPT LOAD to every node, and one may be down while
                // its replica serves: loading is only a head start there (EVALSHA falls back to
                // EVAL), so only a script the server rejects stops the client.
                if (!clustered || e.getCause() instanceof RedisCommandExecutionException) {
                    throw e;
                }
                LOG.debug("could not preload scripts on every cluster node: {}", e.getMessage());
                return;
            }
            if (!script.sha(sharded).equals(sha)) {
                throw new IllegalStateException("Redis computed SHA " + sha + " for " + script + ", expected "
                        + script.sha(sharded));
            }
        }
    }

    /** See {@link RedisGateway#eval(Script, ScriptOutputType, Budget, boolean, String[], String...)}. */
    <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, Budget budget, boolean repeat,
            String[] keys, String... args) {
        // Only a repeat needs the flag: most calls succeed at once and never build that array.
        String[] first = repeat ? withRepeatFlag(args)
                : script.takesFewerArguments() ? withoutTrailingZeros(args) : args;
        return retries.run(budget, attempt -> evalOnce(script, type, keys,
                attempt == 0 || repeat ? first : withRepeatFlag(args)));
    }

    private static String[] withRepeatFlag(String[] args) {
        String[] flagged = Arrays.copyOf(args, args.length + 1);
        flagged[args.length] = "1";
        return flagged;
    }

    private static String[] withoutTrailingZeros(String[] args) {
        int length = args.length;
        while (length > 0 && args[length - 1].equals("0")) {
            length--;
        }
        return length == args.length ? args : Arrays.copyOf(args, length);
    }

    private <T> CompletableFuture<T> evalOnce(Script script, ScriptOutputType type, String[] keys, String[] args) {
        String sha = script.sha(sharded);
        CompletableFuture<T> bySha = commands.<T>evalsha(sha, type, keys, args).toCompletableFuture();
        return bySha.exceptionallyCompose(error -> {
            if (Exceptions.unwrap(error) instanceof RedisNoScriptException) {
                return commands.<T>eval(script.source(sharded), type, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(Exceptions.unwrap(error));
        });
    }
}
