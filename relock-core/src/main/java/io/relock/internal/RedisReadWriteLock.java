package io.relock.internal;

import io.lettuce.core.ScriptOutputType;
import io.relock.DistributedLock;
import io.relock.DistributedReadWriteLock;
import java.util.concurrent.CompletableFuture;

/** Seed 001's read-write lock, in Redisson's layout. */
public final class RedisReadWriteLock implements DistributedReadWriteLock {

    private static final String READ = "read";
    private static final String WRITE = "write";

    private final ReadLock readLock;
    private final WriteLock writeLock;
    private final String name;

    public RedisReadWriteLock(ClientRuntime runtime, String name) {
        this.name = Args.lockName(name);
        this.readLock = new ReadLock(runtime, name);
        this.writeLock = new WriteLock(runtime, name);
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

    private static CompletableFuture<Long> forceReleaseMode(LockBase lock, String mode) {
        return lock.runtime.gateway().eval(Script.RW_FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {lock.key(), lock.channel()}, UnlockChannels.UNLOCK_MESSAGE, mode);
    }

    private static CompletableFuture<String> mode(LockBase lock) {
        return lock.runtime.gateway().read(commands -> commands.hget(lock.key(), "mode"));
    }

    private static CompletableFuture<Integer> count(LockBase lock, String field) {
        return lock.runtime.gateway().<String>read(commands -> commands.hget(lock.key(), field))
                .thenApply(count -> count == null ? 0 : Integer.parseInt(count));
    }

    /** The shared half. */
    static final class ReadLock extends LockBase {

        ReadLock(ClientRuntime runtime, String name) {
            super(runtime, name, RW_CHANNEL_PREFIX);
        }

        private String timeoutPrefix(String field) {
            return auxiliaryKey(field + ":rwlock_timeout");
        }

        @Override
        protected CompletableFuture<Attempt> acquireOnce(Request request) {
            String field = request.field();
            return request.<Long>eval(runtime.gateway(), Script.RW_READ_ACQUIRE, ScriptOutputType.INTEGER,
                    new String[] {key(), timeoutPrefix(field)}, request.lease(), field, field + ":write",
                    request.countBefore()).thenApply(Attempt::fromTtl);
        }

        private String[] releaseKeys(String field) {
            return new String[] {key(), channel(), timeoutPrefix(field), hashTagged()};
        }

        @Override
        protected CompletableFuture<Long> releaseOnce(Request request) {
            return request.eval(runtime.gateway(), Script.RW_READ_RELEASE, ScriptOutputType.INTEGER,
                    releaseKeys(request.field()), UnlockChannels.UNLOCK_MESSAGE, request.field(), "",
                    request.countBefore());
        }

        @Override
        protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
            return runtime.gateway().eval(Script.RW_READ_RELEASE, ScriptOutputType.INTEGER, releaseKeys(field),
                    UnlockChannels.UNLOCK_MESSAGE, field, Integer.toString(countBefore), "0");
        }

        @Override
        protected CompletableFuture<Integer> holdCountOnce(String field) {
            return count(this, field);
        }

        @Override
        protected Script renewScript() {
            return Script.RW_READ_RENEW;
        }

        /** Whether the lock is in read mode: some reader holds it. */
        @Override
        public boolean isLocked() {
            runtime.checkOpen();
            return READ.equals(Futures.await(mode(this), "check read lock '" + getName() + "'"));
        }

        @Override
        protected CompletableFuture<Long> forceReleaseOnce() {
            return forceReleaseMode(this, READ);
        }

        @Override
        String type() {
            return "read";
        }

        @Override
        public String toString() {
            return "ReadLock{name='" + getName() + "'}";
        }
    }

    /** The exclusive half. */
    static final class WriteLock extends LockBase {

        private static final long UPGRADE = -3;

        WriteLock(ClientRuntime runtime, String name) {
            super(runtime, name, RW_CHANNEL_PREFIX);
        }

        @Override
        protected String fieldOf(long owner) {
            return runtime.field(owner) + ":write";
        }

        private static String readerField(String writeField) {
            return writeField.substring(0, writeField.length() - ":write".length());
        }

        @Override
        protected CompletableFuture<Attempt> acquireOnce(Request request) {
            String field = request.field();
            return request.<Long>eval(runtime.gateway(), Script.RW_WRITE_ACQUIRE, ScriptOutputType.INTEGER,
                    new String[] {key()}, request.lease(), field, readerField(field), request.countBefore())
                    .thenApply(ttl -> {
                        if (ttl != null && ttl == UPGRADE) {
                            throw new IllegalMonitorStateException("cannot take the write lock of '" + getName()
                                    + "' while holding only its read lock (" + readerField(field)
                                    + "): an upgrade would wait for itself; release the read lock first");
                        }
                        return Attempt.fromTtl(ttl);
                    });
        }

        @Override
        protected CompletableFuture<Long> releaseOnce(Request request) {
            return request.eval(runtime.gateway(), Script.RW_WRITE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {key(), channel()}, UnlockChannels.READ_UNLOCK_MESSAGE, request.lease(),
                    request.field(), "", request.countBefore());
        }

        @Override
        protected CompletableFuture<Long> rollbackOnce(String field, int countBefore) {
            return runtime.gateway().eval(Script.RW_WRITE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {key(), channel()}, UnlockChannels.READ_UNLOCK_MESSAGE,
                    Long.toString(runtime.watchdog().leaseMillis()), field, Integer.toString(countBefore), "0");
        }

        @Override
        protected CompletableFuture<Integer> holdCountOnce(String field) {
            return count(this, field);
        }

        /** Whether the lock is in write mode: a writer holds it. */
        @Override
        public boolean isLocked() {
            runtime.checkOpen();
            return WRITE.equals(Futures.await(mode(this), "check write lock '" + getName() + "'"));
        }

        @Override
        protected CompletableFuture<Long> forceReleaseOnce() {
            return forceReleaseMode(this, WRITE);
        }

        @Override
        String type() {
            return "write";
        }

        @Override
        public String toString() {
            return "WriteLock{name='" + getName() + "'}";
        }
    }
}
