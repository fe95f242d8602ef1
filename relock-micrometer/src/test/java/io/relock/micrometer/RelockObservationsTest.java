package io.relock.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RelockObservations}: one observation per acquire, on a real Redis. */
class RelockObservationsTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private RedisServer server;
    private Relock relock;
    private TestObservationRegistry registry;
    private RelockObservations observations;

    @BeforeEach
    void start(RedisServer server) {
        this.server = server;
        relock = Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
                .commandTimeout(Duration.ofSeconds(1))
                .build());
        registry = TestObservationRegistry.create();
        observations = new RelockObservations(relock, registry);
    }

    @AfterEach
    void stop() {
        observations.close();
        relock.close();
    }

    @Test
    void anAcquireIsAnObservationChildOfTheCallersCurrentOne() {
        Observation parent = Observation.createNotStarted("checkout", registry);
        DistributedLock lock = relock.getLock("cart:1");
        parent.observe(() -> lock.lock()); // started, current while the body runs, stopped
        lock.unlock();

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("relock.lock.acquire", 1)
                .hasObservationWithNameEqualTo("relock.lock.acquire").that()
                .hasBeenStarted()
                .hasBeenStopped()
                .hasContextualNameEqualTo("lock acquire")
                .hasLowCardinalityKeyValue("lock", "cart:1")
                .hasLowCardinalityKeyValue("type", "reentrant")
                .hasLowCardinalityKeyValue("outcome", "acquired")
                .hasHighCardinalityKeyValue("owner", Long.toString(Thread.currentThread().getId()))
                .doesNotHaveError()
                .hasParentObservationEqualTo(parent);
    }

    @Test
    void withoutACurrentObservationItHasNoParent() {
        DistributedLock lock = relock.getLock("alone");
        lock.lock();
        lock.unlock();
        assertThat(registry).hasObservationWithNameEqualTo("relock.lock.acquire").that()
                .hasBeenStopped()
                .doesNotHaveParentObservation();
    }

    @Test
    void aTimeoutStopsTheObservationWithoutAnError() throws Exception {
        try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            other.getLock("taken").lock();
            assertThat(relock.getLock("taken").tryLock(20, TimeUnit.MILLISECONDS)).isFalse();
        }
        assertThat(registry).hasObservationWithNameEqualTo("relock.lock.acquire").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "timeout")
                .doesNotHaveError();
    }

    @Test
    void aFailedAcquireSetsTheError() {
        DistributedLock lock = relock.getFairLock("unreachable");
        server.kill();
        assertThatThrownBy(lock::tryLock).isInstanceOf(RuntimeException.class);

        assertThat(registry).hasObservationWithNameEqualTo("relock.lock.acquire").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("type", "fair")
                .hasLowCardinalityKeyValue("outcome", "error")
                .hasError();
    }

    @Test
    void theObservationStartsOnTheCallerAndStopsWhenTheAcquireEnds() {
        List<String> seen = new CopyOnWriteArrayList<>();
        ObservationRegistry recording = ObservationRegistry.create();
        recording.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                seen.add("start on " + Thread.currentThread().getName());
            }

            @Override
            public void onStop(Observation.Context context) {
                seen.add("stop " + context.getLowCardinalityKeyValue("outcome").getValue());
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        RelockObservations recorded = new RelockObservations(relock, recording);
        try {
            DistributedLock lock = relock.getLock("ordered");
            lock.lock();
            lock.unlock();
        } finally {
            recorded.close();
        }
        assertThat(seen).containsExactly("start on " + Thread.currentThread().getName(), "stop acquired");
    }

    @Test
    void afterCloseNothingIsObservedAndANoopRegistryCreatesNothing() {
        observations.close();
        observations.close(); // idempotent
        DistributedLock lock = relock.getLock("closed");
        lock.lock();
        lock.unlock();
        assertThat(registry).doesNotHaveAnyObservation();

        RelockObservations noop = new RelockObservations(relock, ObservationRegistry.NOOP);
        try {
            lock.lock();
            lock.unlock();
            assertThat(lock.isLocked()).isFalse();
        } finally {
            noop.close();
        }
    }

    @Test
    void argumentsAreChecked() {
        assertThatThrownBy(() -> new RelockObservations(null, registry)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("relock");
        assertThatThrownBy(() -> new RelockObservations(relock, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("registry");
    }
}
