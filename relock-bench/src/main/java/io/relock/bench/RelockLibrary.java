package io.relock.bench;

import io.micrometer.core.instrument.MeterRegistry;
import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.micrometer.RelockMetrics;
import io.relock.reactor.ReactiveLock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/** Relock with its defaults, except the watchdog timeout where a scenario asks for one. */
final class RelockLibrary implements LockLibrary {

    private final Relock relock;

    RelockLibrary(String uri, Duration watchdogTimeout) {
        RelockConfig.Builder config = RelockConfig.builder().singleServer(uri);
        if (watchdogTimeout != null) {
            config.watchdogTimeout(watchdogTimeout);
        }
        relock = Relock.create(config.build());
    }

    @Override
    public Lock lock(String name) {
        return relock.getLock(name);
    }

    @Override
    public Optional<Lock> fairLock(String name) {
        return Optional.of(relock.getFairLock(name));
    }

    @Override
    public Optional<Lock> writeLock(String name) {
        return Optional.of(relock.getReadWriteLock(name).writeLock());
    }

    @Override
    public Optional<Lock> redLock(String name, List<LockLibrary> masters) {
        DistributedLock[] members = new DistributedLock[masters.size()];
        for (int i = 0; i < members.length; i++) {
            members[i] = ((RelockLibrary) masters.get(i)).relock.getLock(name);
        }
        return Optional.of(relock.getRedLock(members));
    }

    /**
     * relock-reactor's face: {@code ReactiveLock.of(getLock(name)).withLock(work)}, which finds no
     * owner in the subscriber's Reactor context and so makes a new one per subscription.
     */
    @Override
    public Optional<PipelineLock> pipelineLock(String name) {
        return Optional.of(ReactiveLock.of(relock.getLock(name))::withLock);
    }

    @Override
    public Optional<AutoCloseable> bindMetrics(MeterRegistry registry) {
        RelockMetrics metrics = new RelockMetrics(relock);
        metrics.bindTo(registry);
        return Optional.of(metrics);
    }

    @Override
    public boolean renewsLeases() {
        return true;
    }

    @Override
    public void close() {
        relock.close();
    }
}
