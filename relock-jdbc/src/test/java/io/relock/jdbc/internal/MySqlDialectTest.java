package io.relock.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.jdbc.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MySQL's and MariaDB's statements both ways they run, on a real MariaDB server: as text, as on
 * MySQL, and as {@code EXECUTE} of statements each connection prepares, as on MariaDB. The
 * answers must not depend on the way.
 */
class MySqlDialectTest {

    @ParameterizedTest(name = "prepared per connection: {0}")
    @ValueSource(booleans = {false, true})
    void everyStatementAnswersAlikeAsTextAndPrepared(boolean prepared) throws Exception {
        MySqlDialect dialect = new MySqlDialect("relock_lock", prepared);
        try (Connection c = DriverManager.getConnection(Database.MARIADB.newDatabaseUrl());
                Statement ddl = c.createStatement()) {
            ddl.execute(dialect.ddl());

            Dialect.Acquired first = dialect.acquire(c, "x", "a", 30_000, true, true);
            assertThat(first.acquired()).isTrue();
            Dialect.Acquired reentered = dialect.acquire(c, "x", "a", 30_000, true, true);
            assertThat(reentered.acquired()).isTrue();
            assertThat(reentered.token()).as("a re-entry keeps the token").isEqualTo(first.token());
            Dialect.Acquired busy = dialect.acquire(c, "x", "b", 30_000, true, true);
            assertThat(busy.acquired()).isFalse();
            assertThat(busy.ttlMillis()).isBetween(1L, 30_000L);
            assertThat(dialect.read(c, "x")).extracting(Dialect.Row::owner, Dialect.Row::holds, Dialect.Row::token)
                    .containsExactly("a", 2, first.token());

            assertThat(dialect.release(c, "x", "a", 2)).as("one of two holds ended").isEqualTo(0L);
            assertThat(dialect.rollback(c, "x", "a", 0)).as("the last hold undone").isEqualTo(1L);
            assertThat(dialect.read(c, "x")).as("free").isNull();

            Dialect.Acquired next = dialect.acquire(c, "x", "b", 30_000, true, true);
            assertThat(next.acquired()).isTrue();
            assertThat(next.token()).as("tokens only grow").isGreaterThan(first.token());
            assertThat(dialect.keep(c, "x", "b", 60_000)).isEqualTo(1L);
            assertThat(dialect.read(c, "x").ttlMillis()).as("kept past the lease").isGreaterThan(30_000L);
            assertThat(dialect.forceRelease(c, "x")).isEqualTo(1L);
            assertThat(dialect.renew(c, new String[] {"x"}, new String[] {"b"}, 30_000))
                    .containsExactly(Dialect.FORCED);
            assertThat(dialect.release(c, "x", "b", 1)).as("b holds nothing now").isNull();
            assertThat(dialect.sweep(c, 0)).as("the free row swept").isEqualTo(1);
        }
    }
}
