package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.testkit.SentinelExtension;
import io.relock.testkit.SentinelTopology;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link FailoverRun}'s measurement, short: per replica-sync mode, three failovers of a real
 * Sentinel topology (kill, {@code SENTINEL FAILOVER} with the old master left running, kill)
 * under four locking clients. Prints the figures and asserts only what Relock guarantees (see
 * {@code Measurement.violations()}): clients follow every failover, no worker hangs, every
 * failure is one the contract names, and with {@code replicaSync(2)} (every replica) no
 * acknowledged hold is missing on the promoted master. Two-holder incidents are reported, never
 * asserted: without replica sync they are the expected cost of a failover.
 */
class FailoverMeasurementTest {

    @RegisterExtension
    static final SentinelExtension sentinel = SentinelExtension.perClass();

    private static final FailoverOptions FLAGS = new FailoverOptions(3, Duration.ofSeconds(2),
            EnumSet.allOf(FailoverOptions.Mode.class), Path.of("unused"));

    @ParameterizedTest
    @EnumSource(FailoverOptions.Mode.class)
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void clientsFollowEveryFailoverAndKeepTheContract(FailoverOptions.Mode mode, SentinelTopology topology)
            throws Exception {
        try (FailoverRun.Measurement run = new FailoverRun.Measurement(topology, mode, FLAGS)) {
            run.execute();
            System.out.println(run.summary());
            assertThat(run.rounds).as("failovers done").hasSize(FLAGS.failovers());
            assertThat(run.violations()).isEmpty();
            if (mode.replicas >= 2) {
                assertThat(run.probesAcknowledged).as("probe holds acknowledged by every replica").isPositive();
            }
        }
    }
}
