package io.relock.internal.types;

import io.lettuce.core.ScriptOutputType;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import io.relock.internal.backend.LockKeys;
import io.relock.internal.backend.Renewal;
import io.relock.internal.engine.LockEngine;
import io.relock.internal.engine.UnlockChannels;
import io.relock.internal.engine.WaitPolicy;
import io.relock.internal.redis.Script;
import java.util.concurrent.CompletableFuture;

/** The read-write lock in Redisson's layout: two engines on one key, one per mode. */
public final class RedisReadWriteLock implements DistributedReadWriteLock {

    private static final String READ = "read";
    private static final String WRITE = "write";

    private final LockEngine readLock;
    private final LockEngine writeLock;
    private final String name;

    RedisReadWriteLock(DriverClient runtime, LockKeys keys) {
        this.name = keys.name();
        this.readLock = new LockEngine(runtime, keys, new ReadDriver(runtime, keys), WaitPolicy.PUB_SUB);
        this.writeLock = new LockEngine(runtime, keys, new WriteDriver(runtime, keys), WaitPolicy.PUB_SUB);
    }

    @Override
    public DistributedLock readLock() {
        return readLock;
    }

    @Override
    public DistributedLock writeLock() {
        return writeLock;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public String toString() {
        return "RedisReadWriteLock{name='" + name + "'}";
    }

    /** What both halves read and remove the same way, each in its own mode. */
    private abstract static class ModeDriver extends KeyDriver {

        ModeDriver(DriverClient runtime, LockKeys keys, String mode) {
            super(runtime, keys, mode);
        }

        @Override
        public String noun() {
            return type() + " lock";
        }

        @Override
        public CompletableFuture<Integer> holdCount(String field) {
            return hashCount(field);
        }

        /** Whether the lock is in this half's mode: some reader (or the writer) holds it. */
        @Override
        public CompletableFuture<Boolean> isLocked() {
            return runtime.gateway().hashField(keys.key(), "mode").thenApply(type()::equals);
        }

        @Override
        public CompletableFuture<Long> forceRelease() {
            return runtime.gateway().eval(Script.RW_FORCE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {keys.key(), keys.channel()}, UnlockChannels.UNLOCK_MESSAGE, type(), forcedNoteMillis());
        }
    }

    /** The shared half: one field per reader, and a timeout key per hold for its own lease. */
    private static final class ReadDriver extends ModeDriver {

        ReadDriver(DriverClient runtime, LockKeys keys) {
            super(runtime, keys, READ);
        }

        private String timeoutPrefix(String field) {
            return keys.auxiliaryKey(field + ":rwlock_timeout");
        }

        @Override
        public CompletableFuture<Attempt> acquire(Request request) {
            String field = request.field();
            return this.<Long>eval(request, Script.RW_READ_ACQUIRE, ScriptOutputType.INTEGER,
                    new String[] {keys.key(), timeoutPrefix(field)}, request.lease(), field, field + ":write",
                    request.countBefore()).thenApply(Attempt::fromTtl);
        }

        private String[] releaseKeys(String field) {
            return new String[] {keys.key(), keys.channel(), timeoutPrefix(field), keys.hashTagged()};
        }

        @Override
        public CompletableFuture<Long> release(Request request) {
            return eval(request, Script.RW_READ_RELEASE, ScriptOutputType.INTEGER,
                    releaseKeys(request.field()), UnlockChannels.UNLOCK_MESSAGE, request.field(), "",
                    request.countBefore());
        }

        @Override
        public CompletableFuture<Long> rollback(String field, int countBefore) {
            return runtime.gateway().eval(Script.RW_READ_RELEASE, ScriptOutputType.INTEGER, releaseKeys(field),
                    UnlockChannels.UNLOCK_MESSAGE, field, Integer.toString(countBefore), "0");
        }

        @Override
        public Renewal renewal() {
            return Script.RW_READ_RENEW;
        }
    }

    /** The exclusive half: the owner's field with {@code :write} appended. */
    private static final class WriteDriver extends ModeDriver {

        private static final long UPGRADE = -3;
        private static final String SUFFIX = ":write";

        WriteDriver(DriverClient runtime, LockKeys keys) {
            super(runtime, keys, WRITE);
        }

        @Override
        public String fieldOf(String ownerField) {
            return ownerField + SUFFIX;
        }

        private static String readerField(String writeField) {
            return writeField.substring(0, writeField.length() - SUFFIX.length());
        }

        @Override
        public CompletableFuture<Attempt> acquire(Request request) {
            String field = request.field();
            return this.<Long>eval(request, Script.RW_WRITE_ACQUIRE, ScriptOutputType.INTEGER,
                    new String[] {keys.key()}, request.lease(), field, readerField(field), request.countBefore(),
                    request.takeOver())
                    .thenApply(ttl -> {
                        if (ttl != null && ttl == UPGRADE) {
                            throw new IllegalMonitorStateException("cannot take the write lock of '" + keys.name()
                                    + "' while holding only its read lock (" + readerField(field)
                                    + "): an upgrade would wait for itself; release the read lock first");
                        }
                        return Attempt.fromTtl(ttl);
                    });
        }

        @Override
        public CompletableFuture<Long> release(Request request) {
            return eval(request, Script.RW_WRITE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {keys.key(), keys.channel()}, UnlockChannels.READ_UNLOCK_MESSAGE, request.lease(),
                    request.field(), "", request.countBefore());
        }

        @Override
        public CompletableFuture<Long> rollback(String field, int countBefore) {
            return runtime.gateway().eval(Script.RW_WRITE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {keys.key(), keys.channel()}, UnlockChannels.READ_UNLOCK_MESSAGE,
                    Long.toString(runtime.watchdog().leaseMillis()), field, Integer.toString(countBefore), "0");
        }

        @Override
        public Renewal renewal() {
            return Script.LOCK_RENEW;
        }

        /** A writer owns the key alone: its last hold may be kept as a reentrant lock's is. */
        @Override
        public boolean keepsMinimumHold() {
            return true;
        }

        @Override
        public CompletableFuture<Long> keep(String field, long keepMillis) {
            return keepIn(field, keepMillis, "hash");
        }
    }
}
