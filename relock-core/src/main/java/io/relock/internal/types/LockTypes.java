package io.relock.internal.types;

import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.FencedLock;
import io.relock.LockInfo;
import io.relock.RelockConfig;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.WaitPolicy;
import io.relock.internal.redis.Script;
import java.util.List;
import java.util.function.BiPredicate;
import java.util.function.Function;

/**
 * The lock types, each described once: its name, the {@link LockInfo.Kind} its data reads as,
 * the channel its releases are announced on, how a lock of it is built (its driver, which names
 * the type's scripts, and its wait policy) and how {@code Relock.forceUnlock} removes it.
 * {@code Relock}'s factories, {@code forceUnlock} and {@code getLockInfo} read these.
 *
 * <p>Adding a type: a descriptor here, its driver (a {@link LockDriver}) with its Lua scripts
 * (a {@link Script} constant each), and, if its data is told apart from the others', a branch
 * in {@code lock_info.lua} reporting a new {@link LockInfo.Kind}'s {@link LockInfo.Kind#label()}.
 */
public final class LockTypes {

    private LockTypes() {}

    /** Builds a lock of {@code type} named by {@code keys}. */
    @FunctionalInterface
    interface Factory<L> {
        L create(DriverClient runtime, LockKeys keys, String type);
    }

    /**
     * One lock type.
     *
     * @param <L> what its factory returns
     *
     * @param name the type's name, as {@link io.relock.HeldLock#type()} and the observer events
     *     give it (a read-write lock's halves give {@code read} and {@code write})
     * @param kind what {@code lock_info.lua} reports its data as; the first type of a kind
     *     is the one {@link #forceUnlock} removes that kind's data with
     * @param channelPrefix the prefix of its unlock channel (see {@link LockKeys})
     * @param factory builds a lock of this type
     * @param remover removes a lock of this type whoever holds it: true if there was one
     */
    public record Descriptor<L>(String name, LockInfo.Kind kind, String channelPrefix, Factory<L> factory,
            BiPredicate<DriverClient, String> remover) {

        /**
         * A lock of this type named {@code name}, cheap and with no Redis state until used.
         *
         * @throws IllegalArgumentException if the name is not a valid lock name
         */
        public L create(DriverClient runtime, String name) {
            return factory.create(runtime, runtime.keysOf(name, channelPrefix), this.name);
        }
    }

    /** Redisson's {@code RLock} layout, waiting by pub/sub; released locks granted to queued tickets. */
    public static final Descriptor<DistributedLock> REENTRANT = engine("reentrant", LockInfo.Kind.REENTRANT,
            ReentrantDriver::new, config -> WaitPolicy.PUB_SUB);

    /** The reentrant layout, waiting by backoff instead of pub/sub; its data reads as {@link #REENTRANT}. */
    public static final Descriptor<DistributedLock> SPIN = engine("spin", LockInfo.Kind.REENTRANT,
            ReentrantDriver::new, config -> WaitPolicy.backoff(config.spinBackoffInitial(), config.spinBackoffMax()));

    /** The reentrant layout with a waiter queue ({@code {name}:queue}, {@code {name}:timeouts}). */
    public static final Descriptor<DistributedLock> FAIR = engine("fair", LockInfo.Kind.FAIR,
            FairDriver::new, config -> WaitPolicy.PUB_SUB);

    /**
     * The reentrant layout with a fencing token ({@code {name}:token}). Removed as a reentrant
     * lock: its hash is that layout, and the token must outlive every holder.
     */
    public static final Descriptor<FencedLock> FENCED = new Descriptor<>("fenced",
            LockInfo.Kind.FENCED, LockKeys.LOCK_CHANNEL_PREFIX,
            (runtime, keys, type) -> new FencedEngineLock(runtime, keys, new FencedDriver(runtime, keys, type),
                    WaitPolicy.PUB_SUB),
            (runtime, name) -> LockTypes.REENTRANT.remover().test(runtime, name));

    /** A string key holding the owner's token: not reentrant. */
    public static final Descriptor<DistributedLock> SIMPLE = engine("simple", LockInfo.Kind.SIMPLE,
            SimpleDriver::new, config -> WaitPolicy.PUB_SUB);

    /** Redisson's {@code RReadWriteLock} layout: a hash with a {@code mode}, one engine per half. */
    public static final Descriptor<DistributedReadWriteLock> READ_WRITE = new Descriptor<>("read-write",
            LockInfo.Kind.READ_WRITE, LockKeys.RW_CHANNEL_PREFIX,
            (runtime, keys, type) -> new RedisReadWriteLock(runtime, keys),
            (runtime, name) -> {
                DistributedReadWriteLock lock = LockTypes.READ_WRITE.create(runtime, name);
                // Whichever mode holds it; the other finds nothing of its own.
                boolean readers = lock.readLock().forceUnlock();
                boolean writer = lock.writeLock().forceUnlock();
                return readers || writer;
            });

    /** Builds the driver of a type whose lock is one {@link LockEngine}. */
    @FunctionalInterface
    private interface DriverFactory {
        LockDriver create(DriverClient runtime, LockKeys keys, String type);
    }

    /** A type whose lock is one engine over its driver, announcing on the lock channel, removed with its own release. */
    private static Descriptor<DistributedLock> engine(String name, LockInfo.Kind kind, DriverFactory driver,
            Function<RelockConfig, WaitPolicy> wait) {
        Factory<DistributedLock> factory = (runtime, keys, type) ->
                new LockEngine(runtime, keys, driver.create(runtime, keys, type), wait.apply(runtime.config()));
        return new Descriptor<>(name, kind, LockKeys.LOCK_CHANNEL_PREFIX, factory, (runtime, lockName) -> factory
                .create(runtime, runtime.keysOf(lockName, LockKeys.LOCK_CHANNEL_PREFIX), name).forceUnlock());
    }

    /** Every type, in the order in which a kind's first type is looked up. */
    static final List<Descriptor<?>> ALL = List.of(REENTRANT, SPIN, FAIR, FENCED, SIMPLE, READ_WRITE);

    /**
     * Removes whatever lock of {@code kind} lives under {@code name} with its type's own release.
     *
     * @return true if a lock was removed; false for {@link LockInfo.Kind#NONE} and
     *     {@link LockInfo.Kind#NOT_A_LOCK}, which no type writes
     */
    public static boolean forceUnlock(DriverClient runtime, String name, LockInfo.Kind kind) {
        for (Descriptor<?> type : ALL) {
            if (type.kind() == kind) {
                return type.remover().test(runtime, name);
            }
        }
        return false;
    }

    /** The kind {@code lock_info.lua} reports by its label; anything else ({@code other}) is not a lock. */
    public static LockInfo.Kind kindOf(String reported) {
        for (LockInfo.Kind kind : LockInfo.Kind.values()) {
            if (kind != LockInfo.Kind.NOT_A_LOCK && kind.label().equals(reported)) {
                return kind;
            }
        }
        return LockInfo.Kind.NOT_A_LOCK;
    }

    /** The unlock channels of every type that can live under {@code key}, each once. */
    public static String[] channels(String key) {
        return ALL.stream().map(Descriptor::channelPrefix).distinct()
                .map(prefix -> prefix + ":" + LockKeys.hashTagged(key)).toArray(String[]::new);
    }
}
