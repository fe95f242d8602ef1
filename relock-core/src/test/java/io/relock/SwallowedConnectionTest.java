package io.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.FaultProxy;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A holder whose connection starts swallowing everything (a cut cable, a crashed switch: no
 * reset, no reply) while its command timeout is as long as its lease, so that a renewal's
 * failure would come only after the lease has run out. History checked: the holder's listener
 * is told of the loss before a client elsewhere, already waiting, gets the lock; no two holders
 * believe they hold it at once.
 */
class SwallowedConnectionTest {

    private static final Duration LEASE = Duration.ofSeconds(3);

    private RedisServer server;
    private FaultProxy proxy;
    private Clients direct;

    @BeforeEach
    void start() {
        server = RedisServer.start();
        proxy = FaultProxy.to(server);
        direct = new Clients(server);
    }

    @AfterEach
    void stop() {
        direct.close();
        proxy.close();
        server.close();
    }

    @Test
    void theCutOffHolderIsToldBeforeTheWaiterGetsTheLock() throws Exception {
        Relock holder = Relock.create(Backend.single(server).withUri(proxy.uri()).config().get()
                .watchdogTimeout(LEASE).commandTimeout(LEASE).build());
        try (holder) {
            CompletableFuture<Long> toldAt = new CompletableFuture<>();
            CompletableFuture<LockLostEvent> loss = new CompletableFuture<>();
            holder.addLockListener(event -> {
                toldAt.complete(System.nanoTime());
                loss.complete(event);
            });
            holder.getLock("cut-off").lock();
            DistributedLock rival = direct.create().getLock("cut-off");

            proxy.blackhole();
            long cutAt = System.nanoTime();
            assertThat(rival.tryLock(20, TimeUnit.SECONDS)).as("the lease ends and the waiter gets in").isTrue();
            long acquiredAt = System.nanoTime();

            assertThat(toldAt).as("the holder was told before the waiter got in").isDone();
            assertThat(toldAt.get()).isLessThan(acquiredAt);
            assertThat(loss.get().lockName()).isEqualTo("cut-off");
            assertThat(loss.get().cause()).isInstanceOf(RelockException.class)
                    .hasMessageContaining("was not renewed in time");
            assertThat(Duration.ofNanos(acquiredAt - cutAt)).as("no sooner than the lease allows after the last renewal")
                    .isGreaterThanOrEqualTo(LEASE.dividedBy(3));
            rival.unlock();
            // Healed before the holder closes, which would otherwise wait out its command timeout.
            proxy.heal();
        } finally {
            proxy.heal();
        }
    }
}
