package io.relock.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;
import io.relock.AcquireEvent;
import io.relock.ForceUnlockEvent;
import io.relock.HeldLock;
import io.relock.LockForceUnlockedException;
import io.relock.LockLostEvent;
import io.relock.LockObserver;
import io.relock.ReleaseEvent;
import io.relock.Relock;
import io.relock.WatchdogTickEvent;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters of one {@link Relock} client's locks: how long acquires wait and how they
 * end, how long locks are held, which are held now, lost leases, force-unlocks, and the
 * watchdog's renewals and lag.
 *
 * <pre>{@code
 * RelockMetrics metrics = new RelockMetrics(relock);
 * metrics.bindTo(meterRegistry);
 * ...
 * metrics.close(); // before relock.close()
 * }</pre>
 *
 * <table>
 *   <caption>Meters (times in seconds)</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what it measures</th></tr>
 *   <tr><td>{@code relock.lock.wait}</td><td>Timer</td><td>{@code lock}, {@code type},
 *       {@code outcome} = {@code acquired | timeout | interrupted | error}</td>
 *       <td>each acquire, from the call to its end</td></tr>
 *   <tr><td>{@code relock.lock.hold}</td><td>Timer</td><td>{@code lock}, {@code type},
 *       {@code outcome} = {@code released | lost}</td>
 *       <td>each hold, from its first acquire to its last unlock</td></tr>
 *   <tr><td>{@code relock.lock.active}</td><td>LongTaskTimer</td><td>{@code lock}, {@code type}</td>
 *       <td>the holds held now, and for how long</td></tr>
 *   <tr><td>{@code relock.lock.lost}</td><td>Counter</td><td>{@code lock},
 *       {@code cause} = {@code expired | renewal-failed | forced}</td>
 *       <td>leases the watchdog found gone ({@code expired}), could not renew in time, or found
 *       removed by a force-unlock ({@code forced})</td></tr>
 *   <tr><td>{@code relock.lock.force.unlocks}</td><td>Counter</td><td>{@code lock}, {@code type},
 *       {@code removed} = {@code true | false}</td><td>{@code forceUnlock()} calls</td></tr>
 *   <tr><td>{@code relock.watchdog.renewals}</td><td>Counter</td>
 *       <td>{@code outcome} = {@code renewed | failed | lost}</td>
 *       <td>the watchdog's renewals of held leases</td></tr>
 *   <tr><td>{@code relock.watchdog.lag}</td><td>Timer</td><td>none</td>
 *       <td>how much later than planned each watchdog tick ran</td></tr>
 * </table>
 *
 * <p><b>Tags.</b> {@code lock} is the lock's name as given to {@code getLock}; owner ids and
 * client ids are never tags. {@code type} is the lock type ({@link HeldLock#type()}). At most
 * {@code maxLockNames} distinct names are reported per {@code RelockMetrics}: the first ones
 * seen keep their name, every later one is reported as {@code lock=_other}, so totals stay right
 * and the number of series stays bounded. A registry that gets {@code relock.*} meters from
 * elsewhere too (several clients, or {@link RelockObservations} with a meter handler) can cap
 * them all with {@link #lockNameCap(int)}.
 *
 * <p><b>When events count.</b> The constructor registers an observer on the client at once; it
 * records only into registries bound so far, so events before the first {@link #bindTo} are not
 * recorded (not kept for later either). Until then each event costs the observer one volatile
 * read. Meters of a lock are registered on its first event; the watchdog's meters when bound.
 * {@code relock.lock.active} counts a hold from its first acquire to its last unlock; a hold
 * whose owner never unlocks (a fixed lease left to run out, a lost lease) stops counting at the
 * first watchdog tick after the client stopped counting it as held ({@link Relock#heldLocks()}).
 *
 * <p><b>Threads and failures.</b> Recording happens on the thread that reports the event (a
 * caller's, a client I/O thread or its timer thread, see {@link LockObserver}) and never blocks
 * or calls Redis. An exception from a registry is logged by the client and does not affect the
 * lock. All methods are thread-safe.
 */
public final class RelockMetrics implements MeterBinder, AutoCloseable {

    /** How many distinct lock names are reported by default before {@code lock=_other}. */
    public static final int DEFAULT_MAX_LOCK_NAMES = 100;

    private static final Registered[] NONE = {};
    private static final String PREFIX = "relock.";

    private final Relock relock;
    private final LockNameCap names;
    private final Recorder recorder = new Recorder();
    /** The holds counted by relock.lock.active now; only while a registry is bound. */
    private final Map<HoldKey, Active> active = new ConcurrentHashMap<>();
    private volatile Registered[] bound = NONE;
    private volatile boolean closed;

    /**
     * Observes {@code relock}, reporting at most {@link #DEFAULT_MAX_LOCK_NAMES} lock names.
     *
     * @param relock the client whose lock events are measured
     * @throws NullPointerException if {@code relock} is null
     */
    public RelockMetrics(Relock relock) {
        this(relock, DEFAULT_MAX_LOCK_NAMES);
    }

    /**
     * Observes {@code relock}, reporting at most {@code maxLockNames} distinct lock names; every
     * further name is reported as {@code lock=_other}.
     *
     * @param relock the client whose lock events are measured
     * @param maxLockNames how many distinct lock names are reported, at least 1
     * @throws NullPointerException if {@code relock} is null
     * @throws IllegalArgumentException if {@code maxLockNames} is less than 1
     */
    public RelockMetrics(Relock relock, int maxLockNames) {
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.names = new LockNameCap(LockNameCap.requireValid(maxLockNames));
        relock.addObserver(recorder);
    }

    /**
     * A filter that reports at most {@code maxLockNames} distinct values of the {@code lock} tag
     * on meters whose name starts with {@code relock.}; later names become {@code lock=_other}
     * (the meters are kept, not denied, so totals stay right). Other meters pass unchanged.
     *
     * <p>{@link #bindTo} caps its own meters without it; use it on a registry that gets
     * {@code relock.*} meters from several sources, such as several clients' {@code RelockMetrics}
     * or {@link RelockObservations} with a meter handler. Like every {@link MeterFilter}, configure
     * it before meters are registered (Micrometer warns about filters added later).
     *
     * @param maxLockNames how many distinct lock names pass, at least 1
     * @return a new filter with its own set of names
     * @throws IllegalArgumentException if {@code maxLockNames} is less than 1
     */
    public static MeterFilter lockNameCap(int maxLockNames) {
        LockNameCap cap = new LockNameCap(LockNameCap.requireValid(maxLockNames));
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (!id.getName().startsWith(PREFIX)) {
                    return id;
                }
                String lock = id.getTag("lock");
                if (lock == null) {
                    return id;
                }
                String capped = cap.admit(lock);
                return capped.equals(lock) ? id : id.withTag(Tag.of("lock", capped));
            }
        };
    }

    /**
     * Starts recording into {@code registry}: registers the watchdog's meters now and each lock's
     * meters at its first event. May be called for several registries (each gets every event
     * from now on); binding the same registry again has no effect. Events before the first bind
     * are not recorded. It adds no {@link MeterFilter} to the registry (see {@link #lockNameCap}).
     *
     * @param registry where the meters go
     * @throws NullPointerException if {@code registry} is null
     * @throws IllegalStateException if this was closed
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry must not be null");
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("RelockMetrics of client " + relock.clientId() + " is closed");
            }
            for (Registered existing : bound) {
                if (existing.registry == registry) {
                    return;
                }
            }
            Registered[] grown = Arrays.copyOf(bound, bound.length + 1);
            grown[bound.length] = new Registered(registry);
            bound = grown;
        }
    }

    /**
     * Stops recording: removes the observer from the client and ends the
     * {@code relock.lock.active} samples in progress. The meters stay in their registries with
     * the values they have. Calling it again has no effect; it does not close the client.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            bound = NONE;
        }
        relock.removeObserver(recorder);
        for (HoldKey key : active.keySet()) {
            Active sample = active.remove(key);
            if (sample != null) {
                sample.stop();
            }
        }
    }

    @Override
    public String toString() {
        return "RelockMetrics[client=" + relock.clientId() + ", registries=" + bound.length + "]";
    }

    private static String tagValue(Enum<?> outcome) {
        return outcome.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Turns the client's events into meter updates; a no-op while nothing is bound. */
    private final class Recorder implements LockObserver {

        @Override
        public void onAcquireEnd(AcquireEvent event, Object context) {
            Registered[] registries = bound;
            if (registries.length == 0) {
                return;
            }
            String lock = names.admit(event.lockName());
            for (Registered registry : registries) {
                registry.waitTimer(lock, event.lockType(), event.outcome())
                        .record(event.waitNanos(), TimeUnit.NANOSECONDS);
            }
            if (event.outcome() == AcquireEvent.Outcome.ACQUIRED && event.holdCount() == 1) {
                LongTaskTimer.Sample[] samples = new LongTaskTimer.Sample[registries.length];
                for (int i = 0; i < registries.length; i++) {
                    samples[i] = registries[i].activeTimer(lock, event.lockType()).start();
                }
                HoldKey key = new HoldKey(event.lockName(), event.lockType(), event.ownerId());
                Active started = new Active(System.nanoTime(), samples);
                Active previous = active.put(key, started);
                if (previous != null) {
                    previous.stop(); // its release was not reported (an unlock that failed)
                }
                if (closed && active.remove(key, started)) {
                    started.stop(); // close() ran meanwhile and did not see it
                }
            }
        }

        @Override
        public void onRelease(ReleaseEvent event) {
            Registered[] registries = bound;
            if (registries.length == 0) {
                return;
            }
            String lock = names.admit(event.lockName());
            for (Registered registry : registries) {
                registry.holdTimer(lock, event.lockType(), event.outcome())
                        .record(event.holdNanos(), TimeUnit.NANOSECONDS);
            }
            Active ended = active.remove(new HoldKey(event.lockName(), event.lockType(), event.ownerId()));
            if (ended != null) {
                ended.stop();
            }
        }

        @Override
        public void onLockLost(LockLostEvent event) {
            Registered[] registries = bound;
            if (registries.length == 0) {
                return;
            }
            String lock = names.admit(event.lockName());
            LostCause cause = event.cause() == null ? LostCause.EXPIRED
                    : event.cause() instanceof LockForceUnlockedException ? LostCause.FORCED : LostCause.RENEWAL_FAILED;
            for (Registered registry : registries) {
                registry.lostCounter(lock, cause).increment();
            }
        }

        @Override
        public void onForceUnlock(ForceUnlockEvent event) {
            Registered[] registries = bound;
            if (registries.length == 0) {
                return;
            }
            String lock = names.admit(event.lockName());
            for (Registered registry : registries) {
                registry.forceUnlockCounter(lock, event.lockType(), event.removed()).increment();
            }
        }

        @Override
        public void onWatchdogTick(WatchdogTickEvent event) {
            Registered[] registries = bound;
            if (registries.length == 0) {
                return;
            }
            for (Registered registry : registries) {
                registry.tick(event);
            }
            if (!active.isEmpty()) {
                endHoldsNoLongerHeld();
            }
        }

        /**
         * Ends the active samples of holds the client no longer counts as held although no
         * release was reported: a fixed lease that ran out, a lost lease never unlocked. A sample
         * started after the snapshot began is left alone (its hold may be missing from it).
         */
        private void endHoldsNoLongerHeld() {
            long snapshotAt = System.nanoTime();
            Set<HoldKey> held = new HashSet<>();
            for (HeldLock lock : relock.heldLocks()) {
                held.add(new HoldKey(lock.name(), lock.type(), lock.ownerId()));
            }
            active.forEach((key, sample) -> {
                if (sample.startedNanos - snapshotAt < 0 && !held.contains(key) && active.remove(key, sample)) {
                    sample.stop();
                }
            });
        }
    }

    /** One owner's hold of one lock. */
    private record HoldKey(String lockName, String lockType, long ownerId) {
    }

    /** A hold's relock.lock.active samples, one per registry bound when it began. */
    private static final class Active {
        final long startedNanos;
        final LongTaskTimer.Sample[] samples;

        Active(long startedNanos, LongTaskTimer.Sample[] samples) {
            this.startedNanos = startedNanos;
            this.samples = samples;
        }

        void stop() {
            for (LongTaskTimer.Sample sample : samples) {
                sample.stop();
            }
        }
    }

    /** What a lock meter measures beyond its name and type; part of its cache key. */
    private enum Kind { ACTIVE, LOST_EXPIRED, LOST_RENEWAL_FAILED, LOST_FORCED, FORCE_REMOVED, FORCE_NOT_REMOVED }

    /** The {@code cause} tag of {@code relock.lock.lost}: found gone, not renewed in time, or removed by a force-unlock. */
    private enum LostCause {
        EXPIRED("expired", Kind.LOST_EXPIRED),
        RENEWAL_FAILED("renewal-failed", Kind.LOST_RENEWAL_FAILED),
        FORCED("forced", Kind.LOST_FORCED);

        final String tag;
        final Kind kind;

        LostCause(String tag, Kind kind) {
            this.tag = tag;
            this.kind = kind;
        }
    }

    private record MeterKey(String lock, String type, Object kind) {
    }

    /** One bound registry and the meters made in it, looked up without building ids. */
    private static final class Registered {
        final MeterRegistry registry;
        final Map<MeterKey, Meter> meters = new ConcurrentHashMap<>();
        final Counter renewed;
        final Counter renewalsFailed;
        final Counter renewalsLost;
        final Timer lag;

        Registered(MeterRegistry registry) {
            this.registry = registry;
            this.renewed = renewals(registry, "renewed");
            this.renewalsFailed = renewals(registry, "failed");
            this.renewalsLost = renewals(registry, "lost");
            this.lag = Timer.builder("relock.watchdog.lag")
                    .description("How much later than planned a watchdog tick ran; a lag near the lease loses locks")
                    .register(registry);
        }

        private static Counter renewals(MeterRegistry registry, String outcome) {
            return Counter.builder("relock.watchdog.renewals")
                    .description("Renewals of held leases by the watchdog: renewed, failed (retried at the next "
                            + "tick) or lost")
                    .tag("outcome", outcome)
                    .register(registry);
        }

        void tick(WatchdogTickEvent event) {
            if (event.renewed() > 0) {
                renewed.increment(event.renewed());
            }
            if (event.failed() > 0) {
                renewalsFailed.increment(event.failed());
            }
            if (event.lost() > 0) {
                renewalsLost.increment(event.lost());
            }
            lag.record(event.lagNanos(), TimeUnit.NANOSECONDS);
        }

        Timer waitTimer(String lock, String type, AcquireEvent.Outcome outcome) {
            return (Timer) meters.computeIfAbsent(new MeterKey(lock, type, outcome), key -> Timer
                    .builder("relock.lock.wait")
                    .description("Time an acquire took, from the call until it acquired the lock, timed out, "
                            + "was interrupted or failed")
                    .tags("lock", lock, "type", type, "outcome", tagValue(outcome))
                    .register(registry));
        }

        Timer holdTimer(String lock, String type, ReleaseEvent.Outcome outcome) {
            return (Timer) meters.computeIfAbsent(new MeterKey(lock, type, outcome), key -> Timer
                    .builder("relock.lock.hold")
                    .description("Time a lock was held, from its first acquire until the last unlock released it "
                            + "or found it lost")
                    .tags("lock", lock, "type", type, "outcome", tagValue(outcome))
                    .register(registry));
        }

        LongTaskTimer activeTimer(String lock, String type) {
            return (LongTaskTimer) meters.computeIfAbsent(new MeterKey(lock, type, Kind.ACTIVE), key -> LongTaskTimer
                    .builder("relock.lock.active")
                    .description("Locks held through this client now, and for how long")
                    .tags("lock", lock, "type", type)
                    .register(registry));
        }

        Counter lostCounter(String lock, LostCause cause) {
            return (Counter) meters.computeIfAbsent(new MeterKey(lock, "", cause.kind), key -> Counter
                    .builder("relock.lock.lost")
                    .description("Held locks whose lease was lost: found gone (expired), not renewed in time "
                            + "(renewal-failed) or removed by a force-unlock (forced)")
                    .tags("lock", lock, "cause", cause.tag)
                    .register(registry));
        }

        Counter forceUnlockCounter(String lock, String type, boolean removed) {
            Kind kind = removed ? Kind.FORCE_REMOVED : Kind.FORCE_NOT_REMOVED;
            return (Counter) meters.computeIfAbsent(new MeterKey(lock, type, kind), key -> Counter
                    .builder("relock.lock.force.unlocks")
                    .description("forceUnlock() calls, and whether there was a lock to remove")
                    .tags("lock", lock, "type", type, "removed", Boolean.toString(removed))
                    .register(registry));
        }
    }
}
