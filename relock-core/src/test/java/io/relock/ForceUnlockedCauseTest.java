package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A holder whose lock another client force-unlocks hears so: its {@link LockLostEvent}'s cause
 * is a {@link LockForceUnlockedException}, while a lock that is merely gone keeps a null cause.
 */
class ForceUnlockedCauseTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    /** Holds {@code lock} on a short watchdog, lets {@code remove} take it away, and returns the loss the holder hears. */
    private LockLostEvent lossAfter(String name, Consumer<Relock> lock, Consumer<Relock> remove) throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        Relock operator = clients.create();
        CompletableFuture<LockLostEvent> lost = new CompletableFuture<>();
        holder.addLockListener(lost::complete);
        lock.accept(holder);
        remove.accept(operator);
        LockLostEvent event = lost.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event.lockName()).isEqualTo(name);
        return event;
    }

    @Test
    void aForceUnlockByNameReachesTheHolderAsTheCause() throws Exception {
        LockLostEvent event = lossAfter("order:1", holder -> holder.getLock("order:1").lock(),
                operator -> assertThat(operator.forceUnlock("order:1")).isTrue());

        assertThat(event.cause()).isInstanceOf(LockForceUnlockedException.class)
                .hasMessageContaining("order:1").hasMessageContaining("force-unlocked");
    }

    @Test
    void eachLockTypesOwnForceUnlockReachesTheHolderAsTheCause() throws Exception {
        assertThat(lossAfter("p", holder -> holder.getSimpleLock("p").lock(),
                operator -> operator.getSimpleLock("p").forceUnlock()).cause())
                .isInstanceOf(LockForceUnlockedException.class);
        assertThat(lossAfter("r", holder -> holder.getReadWriteLock("r").readLock().lock(),
                operator -> operator.getReadWriteLock("r").readLock().forceUnlock()).cause())
                .isInstanceOf(LockForceUnlockedException.class);
        assertThat(lossAfter("w", holder -> holder.getReadWriteLock("w").writeLock().lock(),
                operator -> operator.getReadWriteLock("w").writeLock().forceUnlock()).cause())
                .isInstanceOf(LockForceUnlockedException.class);
        assertThat(lossAfter("f", holder -> holder.getFairLock("f").lock(),
                operator -> operator.getFairLock("f").forceUnlock()).cause())
                .isInstanceOf(LockForceUnlockedException.class);
    }

    @Test
    void theHoldersUnlockSaysItWasForceUnlocked() throws Exception {
        Relock holder = clients.create(Clients.SHORT_WATCHDOG);
        CompletableFuture<LockLostEvent> lost = new CompletableFuture<>();
        holder.addLockListener(lost::complete);
        DistributedLock lock = holder.getLock("job");
        lock.lock();
        assertThat(clients.create().getLock("job").forceUnlock()).isTrue();
        lost.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);

        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("force-unlocked while held");
    }

    @Test
    void aLockThatIsMerelyGoneKeepsANullCause() throws Exception {
        LockLostEvent event = lossAfter("gone", holder -> holder.getLock("gone").lock(),
                operator -> server.command("DEL", "gone"));

        assertThat(event.cause()).isNull();
    }
}
