package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.Eventually;
import io.relock.testkit.RedisServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A fixed master with two replicas, given in any order: locks live on the master. */
class MasterReplicaTest {

    private static RedisServer master;
    private static RedisServer first;
    private static RedisServer second;

    @BeforeAll
    static void start() {
        master = RedisServer.start();
        first = RedisServer.builder().replicaOf(master).start();
        second = RedisServer.builder().replicaOf(master).start();
    }

    @AfterAll
    static void stop() {
        second.close();
        first.close();
        master.close();
    }

    private static Relock connect(String... uris) {
        return Relock.create(RelockConfig.builder().masterReplica(uris).commandTimeout(Clients.COMMAND_TIMEOUT).build());
    }

    @Test
    void locksAreTakenOnTheMasterWhicheverNodeIsListedFirst() throws Exception {
        try (Relock holder = connect(first.uri(), master.uri(), second.uri());
                Relock waiter = connect(second.uri(), first.uri(), master.uri())) {
            DistributedLock lock = holder.getLock("fixed");
            lock.lock();
            assertThat(master.command("EXISTS", "fixed")).isEqualTo(1L);
            CompletableFuture<Boolean> waiting = Threads.call(() -> waiter.getLock("fixed").tryLock(30, TimeUnit.SECONDS));
            Eventually.await(LockContractTest.PROMPTLY, "a waiter subscribed on the master",
                    () -> holder.getLockInfo("fixed").waitingClients() > 0);
            lock.unlock();
            assertThat(waiting.get(LockContractTest.PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void withoutAReachableMasterCreateFailsNamingTheNodes() {
        assertThatThrownBy(() -> connect(first.uri(), second.uri()))
                .isInstanceOf(RelockConnectionException.class)
                .hasMessageContaining("masterReplica")
                .hasMessageContaining(String.valueOf(first.port()));
    }
}
