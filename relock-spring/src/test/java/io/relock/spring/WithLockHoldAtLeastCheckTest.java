package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * {@link WithLock#holdAtLeast()} is read and checked when the bean is created, as the other
 * durations are: a mistake names the method and the attribute. Redis only for the call that a
 * key naming several locks refuses.
 */
class WithLockHoldAtLeastCheckTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void aMinimumHoldIsPartOfTheCallsRequest() throws Exception {
        LockPlan plan = LockPlan.of(Jobs.class.getMethod("report"), null);
        assertThat(plan.request(new Jobs(), new Object[0]).holdAtLeast()).isEqualTo(Duration.ofSeconds(50));
        assertThat(LockPlan.of(Jobs.class.getMethod("none"), null).request(new Jobs(), new Object[0]).holdAtLeast())
                .as("empty or zero: none").isNull();
        assertThat(LockPlan.of(Jobs.class.getMethod("zero"), null).request(new Jobs(), new Object[0]).holdAtLeast())
                .isNull();
    }

    @Test
    void aMinimumThatIsNoDurationFailsTheStartNamingTheMethodAndTheAttribute() {
        assertThatThrownBy(() -> LockPlan.of(Jobs.class.getMethod("notADuration"), null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Jobs.notADuration()")
                .hasMessageContaining("holdAtLeast 'soon' is not a duration");
        assertThatThrownBy(() -> LockPlan.of(Jobs.class.getMethod("negative"), null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holdAtLeast '-1s' must be zero or more");
    }

    @Test
    void aMinimumLongerThanTheLeaseOrOnAReadLockFailsTheStart() {
        assertThatThrownBy(() -> LockPlan.of(Jobs.class.getMethod("pastTheLease"), null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Jobs.pastTheLease()")
                .hasMessageContaining("holdAtLeast '2m' is longer than leaseTime '1m'");
        assertThatThrownBy(() -> LockPlan.of(Jobs.class.getMethod("read"), null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holdAtLeast cannot keep a READ lock");
    }

    @Test
    void aKeyNamingSeveralLocksIsRefusedAtTheCallBeforeAnythingIsTaken(RedisServer server) throws Throwable {
        LockPlan plan = LockPlan.of(Jobs.class.getMethod("several", List.class), null);
        LockRunner.Request request = plan.request(new Jobs(), new Object[] {List.of("a", "b")});
        LockRunner runner = new LockRunner(io.relock.Relock.create(io.relock.RelockConfig.builder()
                .singleServer(server.uri()).build()), true, null);
        try {
            assertThatThrownBy(() -> runner.run(request, () -> "ran", notAcquired -> "skipped"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("needs one lock, not the 2 of [job:a, job:b]");
            assertThat(server.command("EXISTS", "job:a", "job:b")).as("nothing taken").isEqualTo(0L);
        } finally {
            runner.close();
            runner.relock().close();
        }
    }

    static class Jobs {
        @WithLock(name = "job", holdAtLeast = "50s", leaseTime = "1m", onNotAcquired = WithLock.OnNotAcquired.SKIP)
        public void report() {}

        @WithLock(name = "job")
        public void none() {}

        @WithLock(name = "job", holdAtLeast = "0")
        public void zero() {}

        @WithLock(name = "job", holdAtLeast = "soon")
        public void notADuration() {}

        @WithLock(name = "job", holdAtLeast = "-1s")
        public void negative() {}

        @WithLock(name = "job", holdAtLeast = "2m", leaseTime = "1m")
        public void pastTheLease() {}

        @WithLock(name = "job", holdAtLeast = "1s", type = WithLock.Type.READ)
        public void read() {}

        @WithLock(name = "job", key = "#p0", holdAtLeast = "1s")
        public void several(List<String> ids) {}
    }
}
