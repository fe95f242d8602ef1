package io.relock;

import io.relock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Relock clients for one test, closed together. Holders get a long watchdog by default, so a
 * loaded machine cannot make a lock expire under a test that is not about expiry; tests of the
 * watchdog itself ask for {@link #SHORT_WATCHDOG}.
 */
final class Clients implements AutoCloseable {

    static final Duration STEADY_WATCHDOG = Duration.ofSeconds(30);
    static final Duration SHORT_WATCHDOG = Duration.ofMillis(1500);
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private final Function<Duration, Relock> factory;
    private final List<Relock> open = new ArrayList<>();
    private final List<AutoCloseable> after = new ArrayList<>();

    Clients(RedisServer server) {
        this(Backend.single(server));
    }

    Clients(Backend backend) {
        this(watchdog -> Relock.create(backend.config().get()
                .watchdogTimeout(watchdog)
                .commandTimeout(COMMAND_TIMEOUT)
                .build()));
    }

    /** Clients that {@code factory} makes, given the watchdog timeout; on another store than Redis. */
    Clients(Function<Duration, Relock> factory) {
        this.factory = factory;
    }

    Relock create() {
        return create(STEADY_WATCHDOG);
    }

    Relock create(Duration watchdog) {
        Relock relock = factory.apply(watchdog);
        open.add(relock);
        return relock;
    }

    /** Closes {@code resource} (a connection pool, say) when these clients are closed, after them. */
    Clients closeAfter(AutoCloseable resource) {
        after.add(resource);
        return this;
    }

    @Override
    public void close() {
        open.forEach(Relock::close);
        open.clear();
        for (AutoCloseable resource : after) {
            try {
                resource.close();
            } catch (Exception e) {
                throw new IllegalStateException("could not close " + resource, e);
            }
        }
        after.clear();
    }
}
