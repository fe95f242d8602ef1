package io.relock.demo;

import java.time.Duration;

/**
 * The three watchdog experiments: each runs on the demo's Redis with clients whose watchdog
 * timeout is short enough to watch several leases go by.
 */
abstract class WatchdogExperiment implements Scenario {

    protected final DemoRedis redis;
    protected final Duration watchdogTimeout;
    private final String title;
    private final String whatItShows;

    WatchdogExperiment(DemoRedis redis, Duration watchdogTimeout, String title, String whatItShows) {
        this.redis = redis;
        this.watchdogTimeout = watchdogTimeout;
        this.title = title;
        this.whatItShows = whatItShows;
    }

    @Override
    public final String title() {
        return title;
    }

    @Override
    public final String whatItShows() {
        return whatItShows;
    }
}
