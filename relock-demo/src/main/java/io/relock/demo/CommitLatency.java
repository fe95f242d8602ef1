package io.relock.demo;

import java.io.Serial;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * A transaction manager whose commits take a given time before they reach the database, as a
 * commit to a remote database does (a network round trip, a log flush). Everything else is
 * Spring's {@link DataSourceTransactionManager}: the rows written stay locked and invisible to
 * other transactions until the real commit, as on any database.
 */
final class CommitLatency extends DataSourceTransactionManager {

    @Serial
    private static final long serialVersionUID = 1L;

    private final Duration latency;

    /**
     * @param dataSource the service instance's pool
     * @param latency how long each commit waits before it commits; zero for none
     */
    CommitLatency(DataSource dataSource, Duration latency) {
        super(dataSource);
        this.latency = latency;
    }

    @Override
    protected void doCommit(DefaultTransactionStatus status) {
        if (!latency.isZero()) {
            try {
                Thread.sleep(latency.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TransactionSystemException("interrupted before the commit", e);
            }
        }
        super.doCommit(status);
    }
}
