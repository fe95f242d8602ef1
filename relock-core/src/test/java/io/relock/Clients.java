package io.relock;

import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Relock clients for one test, closed together. Holders get a long watchdog by default, so a
 * loaded machine cannot make a lock expire under a test that is not about expiry; tests of the
 * watchdog itself ask for {@link #SHORT_WATCHDOG}.
 */
final class Clients implements AutoCloseable {

    static final Duration STEADY_WATCHDOG = Duration.ofSeconds(30);
    static final Duration SHORT_WATCHDOG = Duration.ofMillis(1500);
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private final Backend backend;
    private final List<Relock> open = new ArrayList<>();

    Clients(RedisServer server) {
        this(Backend.single(server));
    }

    Clients(Backend backend) {
        this.backend = backend;
    }

    Relock create() {
        return create(STEADY_WATCHDOG);
    }

    Relock create(Duration watchdog) {
        Relock relock = Relock.create(backend.config().get()
                .watchdogTimeout(watchdog)
                .commandTimeout(COMMAND_TIMEOUT)
                .build());
        open.add(relock);
        return relock;
    }

    @Override
    public void close() {
        open.forEach(Relock::close);
        open.clear();
    }
}
