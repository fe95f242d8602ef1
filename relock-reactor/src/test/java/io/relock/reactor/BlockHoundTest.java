package io.relock.reactor;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** The other tests' "nothing blocks" is only worth something if a blocking call would fail them. */
@ExtendWith(NoBlocking.class)
class BlockHoundTest {

    @Test
    void aBlockingCallOnAParallelThreadFails() {
        Mono<Integer> sleeper = Mono.fromCallable(() -> {
            Thread.sleep(1);
            return 1;
        }).subscribeOn(Schedulers.parallel());

        StepVerifier.create(sleeper)
                .expectError(BlockingOperationError.class)
                .verify(Duration.ofSeconds(10));
    }
}
