package io.relock.spring.boot;

import io.relock.testkit.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link TransactionOrderTest} on PostgreSQL: one server for the class, started here by
 * {@link PostgresServer} (never the machine's own), and a new database for each test.
 */
class TransactionOrderOnPostgresTest extends TransactionOrderTest {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.launch();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
    }

    @Override
    String newDatabase() {
        return postgres.createDatabase();
    }
}
