package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import io.relock.testkit.TlsCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a new user reaches for first: the one-call forms ({@code withLock}, {@code tryWithLock},
 * {@code hold}) for every lock type, which behave as {@code lock()}/{@code tryLock()} with
 * {@code unlock()} in a {@code finally} written out by hand; async owner ids that no thread
 * has; the {@code database} setting; TLS from JSSE factories (as a Spring Boot SSL bundle
 * gives them).
 */
class ErgonomicsTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    private RedisServer server;
    private Clients clients;

    /** Every lock type, with a rival from another client that the lock excludes. */
    enum Kind {
        REENTRANT {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getLock(name);
            }
        },
        FAIR {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getFairLock(name);
            }
        },
        SPIN {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getSpinLock(name);
            }
        },
        SIMPLE {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getSimpleLock(name);
            }
        },
        FENCED {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getFencedLock(name);
            }
        },
        READ {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getReadWriteLock(name).readLock();
            }

            @Override
            DistributedLock rival(Relock other, Clients more, String name) {
                return other.getReadWriteLock(name).writeLock();
            }
        },
        WRITE {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getReadWriteLock(name).writeLock();
            }
        },
        MULTI {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getMultiLock(client.getLock(name + ":a"), client.getFairLock(name + ":b"));
            }
        },
        RED {
            @Override
            DistributedLock create(Relock client, Clients more, String name) {
                return client.getRedLock(client.getLock(name + ":1"), more.create().getLock(name + ":2"),
                        more.create().getLock(name + ":3"));
            }
        };

        abstract DistributedLock create(Relock client, Clients more, String name);

        DistributedLock rival(Relock other, Clients more, String name) {
            return create(other, more, name);
        }

        boolean reentrant() {
            return this != SIMPLE;
        }
    }

    @BeforeEach
    void startClients(RedisServer server) {
        this.server = server;
        this.clients = new Clients(server);
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private DistributedLock lock(Kind kind, String name) {
        return kind.create(clients.create(), clients, name);
    }

    private DistributedLock rival(Kind kind, String name) {
        return kind.rival(clients.create(), clients, name);
    }

    // ---- withLock -------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Kind.class)
    void withLockRunsTheActionHoldingTheLockAndReleasesIt(Kind kind) {
        DistributedLock lock = lock(kind, "with");
        DistributedLock rival = rival(kind, "with");
        AtomicBoolean ran = new AtomicBoolean();

        lock.withLock(() -> {
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(rival.tryLock()).as("excluded while the action runs").isFalse();
            ran.set(true);
        });
        String value = lock.withLock(() -> lock.isHeldByCurrentThread() ? "held" : "not held");

        assertThat(ran).isTrue();
        assertThat(value).isEqualTo("held");
        assertThat(lock.isLocked()).isFalse();
        assertThat(rival.tryLock()).isTrue();
        rival.unlock();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void anActionThatThrowsIsRethrownAfterTheRelease(Kind kind) {
        DistributedLock lock = lock(kind, "throwing");
        IllegalStateException failure = new IllegalStateException("the action failed");

        assertThatThrownBy(() -> lock.withLock(() -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(failure.getSuppressed()).isEmpty();
        assertThat(lock.isLocked()).isFalse();

        Supplier<String> failing = () -> {
            throw failure;
        };
        assertThatThrownBy(() -> lock.tryGetWithLock(failing)).isSameAs(failure);
        assertThat(lock.isLocked()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aFailedReleaseAfterAFailedActionIsSuppressedInTheActionsException(Kind kind) {
        DistributedLock lock = lock(kind, "lost-and-failed");
        IllegalStateException failure = new IllegalStateException("the action failed");

        assertThatThrownBy(() -> lock.withLock(() -> {
            lock.forceUnlock();
            throw failure;
        })).isSameAs(failure);

        assertThat(failure.getSuppressed()).singleElement().isInstanceOf(IllegalMonitorStateException.class);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aHoldLostDuringTheActionIsReportedAsUnlockReportsIt(Kind kind) {
        DistributedLock lock = lock(kind, "lost");

        assertThatThrownBy(() -> lock.withLock(lock::forceUnlock)).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> lock.tryWithLock(() -> lock.forceUnlock()))
                .isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aNullActionIsRejectedBeforeAnythingIsAcquired() {
        DistributedLock lock = clients.create().getLock("null-action");
        assertThatThrownBy(() -> lock.withLock((Runnable) null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("action");
        assertThatThrownBy(() -> lock.withLock((Supplier<?>) null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("action");
        assertThatThrownBy(() -> lock.tryWithLock(1, TimeUnit.SECONDS, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("action");
        assertThatThrownBy(() -> lock.tryGetWithLock(1, null, () -> 1))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("unit");
        assertThatThrownBy(() -> lock.tryHold(1, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("unit");
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void withLockLeavesTheInterruptFlagSetAndStillReleases() {
        DistributedLock lock = clients.create().getLock("interrupted");
        try {
            Thread.currentThread().interrupt();
            lock.withLock(() -> assertThat(lock.isHeldByCurrentThread()).isTrue());
            assertThat(Thread.currentThread().isInterrupted()).as("interrupted before").isTrue();
            Thread.interrupted();

            lock.withLock(() -> Thread.currentThread().interrupt());
            assertThat(Thread.currentThread().isInterrupted()).as("interrupted by the action").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(lock.isLocked()).isFalse();
    }

    // ---- tryWithLock ----------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Kind.class)
    void theTryFormsSkipTheActionWhileAnotherOwnerHoldsTheLock(Kind kind) throws Exception {
        DistributedLock lock = lock(kind, "busy");
        DistributedLock rival = rival(kind, "busy");
        AtomicInteger runs = new AtomicInteger();
        rival.lock();

        assertThat(lock.tryWithLock(runs::incrementAndGet)).isFalse();
        assertThat(lock.tryWithLock(100, TimeUnit.MILLISECONDS, runs::incrementAndGet)).isFalse();
        assertThat(lock.tryGetWithLock(runs::incrementAndGet)).isEmpty();
        assertThat(lock.tryGetWithLock(100, TimeUnit.MILLISECONDS, runs::incrementAndGet)).isEmpty();
        try (LockHold hold = lock.tryHold()) {
            assertThat(hold).isNull();
        }
        try (LockHold hold = lock.tryHold(100, TimeUnit.MILLISECONDS)) {
            assertThat(hold).isNull();
        }
        assertThat(runs).hasValue(0);

        rival.unlock();
        assertThat(lock.tryWithLock(runs::incrementAndGet)).isTrue();
        assertThat(lock.tryWithLock(1, TimeUnit.SECONDS, runs::incrementAndGet)).isTrue();
        assertThat(lock.tryGetWithLock(runs::incrementAndGet)).contains(3);
        assertThat(lock.tryGetWithLock(1, TimeUnit.SECONDS, runs::incrementAndGet)).contains(4);
        assertThat(lock.tryGetWithLock(() -> null)).as("a null value, as Optional.map has it").isEmpty();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aTimedTryFormGetsTheLockWhenItIsReleasedWithinTheWait() throws Exception {
        DistributedLock lock = clients.create().getLock("released");
        DistributedLock rival = clients.create().getLock("released");
        rival.lock();
        var attempt = Threads.call(() -> lock.tryGetWithLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS,
                () -> lock.isHeldByCurrentThread()));
        Relock inspector = clients.create();
        Eventually.await(PROMPTLY, "a waiter subscribed", () -> inspector.getLockInfo("released").waitingClients() > 0);

        rival.unlock();

        assertThat(attempt.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).contains(true);
        assertThat(lock.isLocked()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void anInterruptedTimedTryFormThrowsAndRunsNothing(Kind kind) {
        DistributedLock lock = lock(kind, "interrupted-try");
        AtomicBoolean ran = new AtomicBoolean();
        try {
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> lock.tryWithLock(1, TimeUnit.SECONDS, () -> ran.set(true)))
                    .isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
        assertThat(ran).isFalse();
        assertThat(lock.isLocked()).isFalse();
    }

    // ---- hold -----------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aHoldIsReleasedByCloseOnceAndNestsForReentrantLocks(Kind kind) {
        DistributedLock lock = lock(kind, "hold");
        DistributedLock rival = rival(kind, "hold");

        try (LockHold outer = lock.hold()) {
            assertThat(outer.getLock()).isSameAs(lock);
            if (kind.reentrant()) {
                try (LockHold inner = lock.tryHold()) {
                    assertThat(inner).isNotNull();
                }
                assertThat(lock.isHeldByCurrentThread()).as("the outer hold remains").isTrue();
            }
            assertThat(rival.tryLock()).isFalse();
        }
        assertThat(lock.isLocked()).isFalse();

        LockHold hold = lock.hold();
        hold.close();
        rival.lock();
        hold.close();
        assertThat(rival.isHeldByCurrentThread()).as("a second close unlocks nothing").isTrue();
        rival.unlock();
    }

    @Test
    void aCheckedExceptionLeavesTheHoldThroughTryWithResources() {
        DistributedLock lock = clients.create().getLock("checked");
        assertThatThrownBy(() -> {
            try (LockHold hold = lock.hold()) {
                throw new IOException("disk full while holding " + hold.getLock().getName());
            }
        }).isInstanceOf(IOException.class);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void closingALostHoldThrowsOnceAndThenNothing() {
        DistributedLock lock = clients.create().getLock("lost-hold");
        LockHold hold = lock.hold();
        lock.forceUnlock();
        assertThatThrownBy(hold::close).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("lost-hold");
        hold.close();
    }

    // ---- async owner ids ------------------------------------------------------------------------

    @Test
    void newOwnerIdsAreNegativeAndNeverRepeat() {
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            ids.add(Relock.newOwnerId());
        }
        assertThat(ids).hasSize(1000).allSatisfy(id -> assertThat(id).isNegative());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void anAsyncHoldWithANewOwnerIdIsHeldByNoThread(Kind kind) throws Exception {
        DistributedLock lock = lock(kind, "async-owner");
        long owner = Relock.newOwnerId();
        lock.lockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(lock.isHeldByThread(owner)).isTrue();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.getHoldCount()).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(Threads.call(() -> {
            try {
                lock.unlock();
                return "unlocked";
            } catch (IllegalMonitorStateException e) {
                return "refused";
            }
        }).get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("refused");
        assertThat(lock.isHeldByThread(owner)).as("still held after the refused unlocks").isTrue();

        lock.unlockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void anAsyncOwnerIsStoredInRedissonsFieldFormat() throws Exception {
        Relock client = clients.create();
        DistributedLock lock = client.getLock("async-field");
        long owner = Relock.newOwnerId();
        assertThat(lock.tryLockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();

        assertThat(server.command("HGETALL", "async-field"))
                .isEqualTo(List.of(client.clientId() + ":" + owner, "1"));
        lock.unlockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aPositiveOwnerIdIsTheThreadWithThatIdAsDocumented() throws Exception {
        DistributedLock lock = clients.create().getLock("thread-id-owner");
        long thisThread = Thread.currentThread().getId();
        lock.lockAsync(thisThread).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void oneOwnerIdServesTheMembersOfARedLockFromSeveralClients() throws Exception {
        DistributedLock red = Kind.RED.create(clients.create(), clients, "shared-owner");
        long owner = Relock.newOwnerId();
        assertThat(red.tryLockAsync(0, -1, TimeUnit.SECONDS, owner).toCompletableFuture()
                .get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        Optional<Boolean> other = clients.create().getLock("shared-owner:2").tryGetWithLock(() -> true);
        assertThat(other).as("the member is held for the async owner").isEmpty();
        red.unlockAsync(owner).toCompletableFuture().get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(red.isLocked()).isFalse();
    }

    // ---- database -------------------------------------------------------------------------------

    @Test
    void theDatabaseSettingSelectsWhereASingleServersLocksLive() throws Exception {
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).database(3).build())) {
            DistributedLock lock = relock.getLock("in-db-3");
            lock.lock();
            assertThat(keyExists(server.uri() + "/3", "in-db-3")).isTrue();
            assertThat(keyExists(server.uri(), "in-db-3")).as("not in database 0").isFalse();
            lock.unlock();
            assertThat(keyExists(server.uri() + "/3", "in-db-3")).isFalse();
        }
    }

    @Test
    void theDatabaseSettingAppliesToMasterReplicaNodes() {
        try (Relock relock = Relock.create(RelockConfig.builder().masterReplica(server.uri()).database(4).build())) {
            relock.getLock("in-db-4").withLock(() -> assertThat(server.info("keyspace")).as("the lock and the client's registry entry")
                    .contains("db4:keys=2"));
        }
    }

    @Test
    void theDatabaseSettingAppliesToTheMasterSentinelNames() {
        try (SentinelTopology topology = SentinelTopology.builder().replicas(0).sentinels(1).quorum(1).start();
                Relock relock = Relock.create(RelockConfig.builder()
                        .sentinel(topology.masterName(), topology.sentinelUris().toArray(String[]::new))
                        .database(5).build())) {
            relock.getLock("in-db-5").withLock(() ->
                    assertThat(topology.master().info("keyspace")).as("the lock and the client's registry entry")
                            .contains("db5:keys=2"));
        }
    }

    /** Asks Redis with a client of its own, connected to the database the URI names. */
    private static boolean keyExists(String uri, String key) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().exists(key) == 1;
        } finally {
            client.shutdown();
        }
    }

    // ---- TLS from JSSE factories ----------------------------------------------------------------

    @Test
    void aTrustManagerFactoryTrustingTheTestCaConnectsAndTheJvmDefaultDoesNot() throws Exception {
        assumeTls();
        try (RedisServer tls = RedisServer.builder().tls().start()) {
            try (Relock relock = Relock.create(RelockConfig.builder().singleServer(tls.tlsUri())
                    .trustManagerFactory(trustingTheTestCa()).build())) {
                DistributedLock lock = relock.getLock("over-tls");
                assertThat(lock.withLock(lock::isHeldByCurrentThread)).isTrue();
                assertThat(lock.isLocked()).isFalse();
            }
            TrustManagerFactory jvmDefault = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            jvmDefault.init((KeyStore) null);
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder().singleServer(tls.tlsUri())
                    .trustManagerFactory(jvmDefault).build()))
                    .isInstanceOf(RelockConnectionException.class)
                    .satisfies(e -> assertThat(causes(e)).anyMatch(SSLHandshakeException.class::isInstance));
        }
    }

    @Test
    void aKeyManagerFactoryPresentsTheClientCertificateAServerRequires() throws Exception {
        assumeTls();
        try (RedisServer tls = RedisServer.builder().tls().arg("tls-auth-clients", "yes").start()) {
            assertThatThrownBy(() -> Relock.create(RelockConfig.builder().singleServer(tls.tlsUri())
                    .trustManagerFactory(trustingTheTestCa()).commandTimeout(Clients.COMMAND_TIMEOUT).build()))
                    .as("no client certificate").isInstanceOf(RelockConnectionException.class);
            try (Relock relock = Relock.create(RelockConfig.builder().singleServer(tls.tlsUri())
                    .trustManagerFactory(trustingTheTestCa()).keyManagerFactory(presentingTheTestCertificate())
                    .build())) {
                DistributedLock lock = relock.getLock("client-certificate");
                assertThat(lock.tryGetWithLock(() -> "held")).contains("held");
            }
        }
    }

    private static TrustManagerFactory trustingTheTestCa() throws GeneralSecurityException {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(TlsCertificates.get().trustStore());
        return trust;
    }

    /** The testkit's server certificate (issued for client use too) and its key, as a client would present them. */
    private static KeyManagerFactory presentingTheTestCertificate() throws GeneralSecurityException, IOException {
        TlsCertificates tls = TlsCertificates.get();
        String pem = Files.readString(tls.privateKey()).replaceAll("-----[A-Z ]+-----", "");
        PrivateKey key = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(pem)));
        Certificate certificate;
        try (InputStream in = Files.newInputStream(tls.certificate())) {
            certificate = CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        char[] password = "key-store".toCharArray();
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("client", key, password, new Certificate[] {certificate});
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        return keys;
    }

    private static List<Throwable> causes(Throwable error) {
        List<Throwable> found = new ArrayList<>();
        for (Throwable t = error; t != null && found.size() < 20; t = t.getCause()) {
            found.add(t);
        }
        return found;
    }

    private static void assumeTls() {
        RedisBinary binary = RedisBinary.locate();
        assumeTrue(binary.supportsTls(), "the redis-server binary " + binary.path() + " has no TLS support");
    }
}
