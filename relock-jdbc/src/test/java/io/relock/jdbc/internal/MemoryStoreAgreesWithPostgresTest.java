package io.relock.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.RelockConfig;
import io.relock.internal.backend.Budget;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.model.Differential;
import io.relock.internal.model.Differential.State;
import io.relock.internal.model.Differential.Type;
import io.relock.internal.model.MemoryStore;
import io.relock.jdbc.Database;
import io.relock.jdbc.RelockJdbc;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@link MemoryStore} (the model of Redis's scripts) against the PostgreSQL lease table:
 * random sequences of the reentrant, fenced and simple locks' driver calls ({@link JdbcDriver} on a
 * real server of the testkit's) must answer as the model does, and leave the same holder, count
 * and lease, wherever the table does what Redis does. So the database back end cannot drift from
 * the behaviour the engine's models assume.
 *
 * <p>Where it differs on purpose, the rules say so and the comparison leaves it out:
 * <ul>
 *   <li>its waiters take no turns (a release frees the row; they ask again), so no tickets,
 *       grants or hand-overs;</li>
 *   <li>it never sends a statement twice, so no call is a repeat;</li>
 *   <li>its tokens come from the database's clock (microseconds, at least the last one plus 1) and
 *       every type's hold has one: the fenced lock's are compared by order, a new holder's
 *       greater and a re-entry's the same;</li>
 *   <li>a keep keeps only a last hold: it is called only as the engine calls it;</li>
 *   <li>it tells a holder a force-release removed only when the holder renews (a keep answers 0
 *       where Redis tells 2);</li>
 *   <li>a re-entry keeps the later of the two expiries and a release of one of several holds keeps
 *       the expiry (Redis sets the new lease): one lease for every call, so both agree within the
 *       slack.</li>
 * </ul>
 */
class MemoryStoreAgreesWithPostgresTest {

    private static final int SEQUENCES = 10;
    private static final int STEPS = 150;
    private static final long LEASE = Duration.ofMinutes(10).toMillis();

    @Test
    void everyReplyAndStateIsTheModelsWhereTheTableDoesWhatRedisDoes() {
        Differential.Rules rules = new Differential.Rules().noTurns().noRepeats().tokensByOrder().tokensOnEveryType()
                .keepLastHoldOnly().noForcedNoteOnKeep().leases(LEASE);
        try (HikariDataSource dataSource = Database.POSTGRESQL.freshDataSource()) {
            JdbcClient client = JdbcClient.start(new JdbcClient.Settings(dataSource, dataSource,
                    RelockJdbc.DEFAULT_TABLE, true, RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER)
                            .releaseOnShutdown(false).build(), 2, RelockJdbc.DEFAULT_RETENTION));
            try {
                OnPostgres backend = new OnPostgres(client.gateway());
                int operations = 0;
                for (int sequence = 0; sequence < SEQUENCES; sequence++) {
                    operations += Differential.run(backend, rules, 2_000_029L * (sequence + 1), "pg", STEPS);
                }
                assertThat(operations).as("operations compared").isGreaterThan(SEQUENCES * STEPS);
            } finally {
                client.close();
            }
        }
    }

    /** The lease table through the production driver; its state read as the client reads a lock. */
    private record OnPostgres(JdbcGateway gateway) implements Differential.Backend {

        @Override
        public LockDriver driver(Type type, String name) {
            return switch (type) {
                case REENTRANT -> new JdbcDriver(gateway, name, "reentrant", true);
                case FENCED -> new JdbcDriver(gateway, name, "fenced", true);
                case SIMPLE -> new JdbcDriver(gateway, name, "simple", false);
            };
        }

        @Override
        public RenewalGateway renewals() {
            return gateway;
        }

        @Override
        public Budget budget() {
            return new Budget(Long.MAX_VALUE, Long.MAX_VALUE);
        }

        @Override
        public State state(Type type, String name) {
            Dialect.Row row = gateway.submit("read lock '" + name + "'", (c, d) -> d.read(c, name)).join();
            return row == null ? new State(Map.of(), -2, null, null)
                    : new State(Map.of(row.owner(), row.holds()), row.ttlMillis(), null, null);
        }
    }
}
