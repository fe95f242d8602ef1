package io.relock.internal.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The rule a cancellable acquire stands on: exactly one of the caller and the undo gets the result. */
class FuturesTest {

    private final CompletableFuture<Boolean> source = new CompletableFuture<>();
    private final AtomicInteger stops = new AtomicInteger();
    private final List<Boolean> abandoned = new CopyOnWriteArrayList<>();
    private final CompletableFuture<String> stage = Futures.cancellable(source, won -> won ? "held" : "free",
            stops::incrementAndGet, abandoned::add);

    @Test
    void aResultThatArrivesAfterTheCancelGoesToTheUndo() {
        assertThat(stage.cancel(false)).isTrue();
        assertThat(stops).hasValue(1);
        assertThat(abandoned).isEmpty();

        source.complete(true);

        assertThat(stage.isCancelled()).isTrue();
        assertThat(abandoned).containsExactly(true);
    }

    @Test
    void aResultThatArrivesBeforeTheCancelStaysTheCallers() {
        source.complete(true);

        assertThat(stage.cancel(false)).isFalse();
        assertThat(stage.join()).isEqualTo("held");
        assertThat(stops).hasValue(0);
        assertThat(abandoned).isEmpty();
    }

    @Test
    void aFailureReachesTheCallerAndNothingIsUndone() {
        IllegalStateException failure = new IllegalStateException("redis down");
        source.completeExceptionally(failure);

        assertThat(stage).isCompletedExceptionally();
        assertThat(stage.handle((value, error) -> error).join()).isSameAs(failure);
        assertThat(abandoned).isEmpty();
    }

    @Test
    void aSecondCancelStopsNothingMore() {
        stage.cancel(true);
        stage.cancel(true);

        assertThat(stops).hasValue(1);
    }
}
