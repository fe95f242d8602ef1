package io.relock;

import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Relock clients for one test, closed together. Short timeouts keep the tests fast. */
final class Clients implements AutoCloseable {

    static final Duration WATCHDOG = Duration.ofMillis(600);
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private final RedisServer server;
    private final List<Relock> open = new ArrayList<>();

    Clients(RedisServer server) {
        this.server = server;
    }

    Relock create() {
        return create(WATCHDOG);
    }

    Relock create(Duration watchdog) {
        Relock relock = Relock.create(RelockConfig.builder()
                .singleServer(server.uri())
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
