package io.relock.demo;

import io.r2dbc.spi.ConnectionFactory;
import java.io.Serial;
import java.time.Duration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.transaction.reactive.GenericReactiveTransaction;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Mono;

/**
 * {@link CommitLatency} for reactive transactions: each commit waits the given time before it
 * reaches the database, without blocking a thread (a timer delays the commit's signal).
 * Everything else is Spring's {@link R2dbcTransactionManager}: the rows written stay locked and
 * invisible to other transactions until the real commit.
 */
final class ReactiveCommitLatency extends R2dbcTransactionManager {

    @Serial
    private static final long serialVersionUID = 1L;

    private final Duration latency;

    /**
     * @param connections the service instance's R2DBC connections
     * @param latency how long each commit waits before it commits; zero for none
     */
    ReactiveCommitLatency(ConnectionFactory connections, Duration latency) {
        super(connections);
        this.latency = latency;
    }

    @Override
    protected Mono<Void> doCommit(TransactionSynchronizationManager synchronizations,
            GenericReactiveTransaction status) {
        Mono<Void> commit = Mono.defer(() -> super.doCommit(synchronizations, status));
        return latency.isZero() ? commit : Mono.delay(latency).then(commit);
    }
}
