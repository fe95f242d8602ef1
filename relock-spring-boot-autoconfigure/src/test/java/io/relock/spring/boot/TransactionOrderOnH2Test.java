package io.relock.spring.boot;

import java.util.UUID;

/** {@link TransactionOrderTest} on H2, in-process: a new in-memory database for each test. */
class TransactionOrderOnH2Test extends TransactionOrderTest {

    @Override
    String newDatabase() {
        // DB_CLOSE_DELAY=-1: kept between connections, which DriverManagerDataSource does not pool.
        return "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }
}
