package io.relock.internal;

import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Unlock notifications over the client's single pub/sub connection. Each channel is subscribed
 * while at least one waiter of this client needs it (reference-counted) and unsubscribed when
 * the last one leaves.
 *
 * <p>A waiter parks a callback with a timeout; an unlock message runs one parked callback (a
 * read-unlock message runs all of them). Messages are counted per channel, and a release between
 * a waiter's failed attempt and its park is not lost: an unlock message that found nobody parked
 * sends the first waiter to park that missed it straight back, a read-unlock every such waiter
 * (see {@link Parking}). Every wake-up is only a hint: the callback tries to acquire again.
 * After the connection comes back every parked callback runs, since messages may have been
 * missed while it was down.
 *
 * <p>A message that is a number above 1 is a hand-off ticket (owner transfer): a release made
 * the waiter with that ticket the owner. It runs that waiter's grant callback if it is this
 * client's; otherwise it tells this client's queued waiter that the lock changed hands (see
 * {@link Acquisition#grantedElsewhere()}). It is not an unlock message and wakes no parked waiter.
 */
public final class UnlockChannels {

    private static final Logger LOG = LoggerFactory.getLogger(UnlockChannels.class);

    /** Message published when a lock is released. */
    public static final String UNLOCK_MESSAGE = "0";
    /** Message published when a read lock is released: every waiter may proceed. */
    public static final String READ_UNLOCK_MESSAGE = "1";

    /**
     * The two commands the channels send: on the pub/sub connection, or on a stand-in in unit
     * tests, where messages then come through {@link #onMessage}.
     */
    interface Commands {

        /** Subscribes; completes when the server confirmed it. */
        CompletableFuture<Void> subscribe(String channel);

        CompletableFuture<Void> unsubscribe(String channel);
    }

    /** How often a cluster client subscribes its channels again while its slot map is unsettled (see {@link #topologyChanged}). */
    static final long RESUBSCRIBE_PERIOD_MILLIS = 500;
    /** How many of those rounds without a slot-map change count as settled: five seconds. */
    static final int SETTLE_ROUNDS = 10;

    private final Commands commands;
    private final Timer timer;
    private final boolean sharded;
    private final Map<String, Channel> channels = new HashMap<>();
    /** Rounds of subscribing again left before the slot map counts as settled; guarded by channels. */
    private int unsettledRounds;
    /** Whether a round is scheduled; guarded by channels. */
    private boolean settling;

    /**
     * @param sharded whether to use sharded pub/sub (SSUBSCRIBE), as the release scripts of a
     *     Redis 7+ cluster SPUBLISH
     */
    public UnlockChannels(StatefulRedisPubSubConnection<String, String> connection, Timer timer, boolean sharded) {
        this(new Commands() {
            @Override
            public CompletableFuture<Void> subscribe(String channel) {
                String mark = relockMark(channel);
                return (sharded ? connection.async().ssubscribe(channel, mark)
                        : connection.async().subscribe(channel, mark)).toCompletableFuture();
            }

            @Override
            public CompletableFuture<Void> unsubscribe(String channel) {
                String mark = relockMark(channel);
                return (sharded ? connection.async().sunsubscribe(channel, mark)
                        : connection.async().unsubscribe(channel, mark)).toCompletableFuture();
            }
        }, timer, sharded);
        connection.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                onMessage(channel, message);
            }

            @Override
            public void smessage(String channel, String message) {
                onMessage(channel, message);
            }
        });
        connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(io.lettuce.core.RedisChannelHandler<?, ?> handler, SocketAddress address) {
                wakeEveryone();
            }
        });
    }

    UnlockChannels(Commands commands, Timer timer, boolean sharded) {
        this.commands = commands;
        this.timer = timer;
        this.sharded = sharded;
    }

    /** Subscribes (or joins an existing subscription); completes when the server confirmed it. */
    public CompletableFuture<Channel> subscribe(String name) {
        Channel channel;
        synchronized (channels) {
            channel = channels.get(name);
            if (channel == null) {
                channel = new Channel(name);
                channels.put(name, channel);
                channel.ready = commands.subscribe(name);
            }
            channel.references++;
        }
        Channel subscribed = channel;
        return channel.ready.handle((ignored, error) -> {
            if (error != null) {
                release(subscribed);
                throw Exceptions.translate("subscribe to " + name, error);
            }
            return subscribed;
        });
    }

    /** Leaves a subscription; the last one out unsubscribes. */
    public void release(Channel channel) {
        synchronized (channels) {
            if (--channel.references > 0) {
                return;
            }
            channels.remove(channel.name);
            // Sent under the lock so that a SUBSCRIBE for a new waiter of the same name is
            // written after it on the one connection, not undone by it.
            commands.unsubscribe(channel.name)
                    .whenComplete((ignored, error) -> {
                        if (error != null) {
                            // Costs stray messages (and a waiter count too high) until reconnect.
                            LOG.debug("could not unsubscribe from {} ({})", channel.name, error.toString());
                        }
                    });
        }
    }

    /**
     * After a cluster's slot map changed: a shard channel's slot may now belong to another node,
     * and a subscription on a failed node hears nothing, so every channel is subscribed again
     * (routed to the slot's current owner) and every waiter retries at once. One change is not
     * enough: during a failover the client's view of the slot map can change several times, a
     * SUBSCRIBE routed by a view taken before the promotion is refused, and one that went to the
     * promoted master can be lost with its connection when a later, older view takes the node for
     * a replica and closes it; the slot map may then settle without another change being seen.
     * So the channels are subscribed again every {@link #RESUBSCRIBE_PERIOD_MILLIS} until
     * {@link #SETTLE_ROUNDS} rounds passed without a change, each round followed by a retry of
     * every waiter (a release may have been announced where nobody of this client listened).
     * Subscribing again where the subscription stands changes nothing.
     */
    public void topologyChanged() {
        if (sharded) {
            synchronized (channels) {
                unsettledRounds = SETTLE_ROUNDS;
                if (!settling) {
                    settling = true;
                    timer.newTimeout(timeout -> resubscribeWhileUnsettled(), RESUBSCRIBE_PERIOD_MILLIS,
                            TimeUnit.MILLISECONDS);
                }
            }
            resubscribeAll();
        } else {
            wakeEveryone();
        }
    }

    private void resubscribeWhileUnsettled() {
        synchronized (channels) {
            if (--unsettledRounds > 0) {
                timer.newTimeout(timeout -> resubscribeWhileUnsettled(), RESUBSCRIBE_PERIOD_MILLIS,
                        TimeUnit.MILLISECONDS);
            } else {
                settling = false;
            }
        }
        resubscribeAll();
    }

    /** Subscribes every channel again, then wakes every waiter, whether or not each subscribe went through. */
    private void resubscribeAll() {
        List<CompletableFuture<Void>> subscribes = new ArrayList<>();
        synchronized (channels) {
            for (String name : channels.keySet()) {
                subscribes.add(commands.subscribe(name));
            }
        }
        CompletableFuture.allOf(subscribes.toArray(CompletableFuture[]::new))
                .whenComplete((ignored, error) -> wakeEveryone());
    }

    /** The channel {@code name} if a waiter of this client is subscribed to it, else null; takes no reference. */
    Channel existing(String name) {
        synchronized (channels) {
            return channels.get(name);
        }
    }

    /** How many channels this client is subscribed to (for tests and the inspector). */
    public int subscribedChannels() {
        synchronized (channels) {
            return channels.size();
        }
    }

    void onMessage(String name, String message) {
        Channel channel;
        synchronized (channels) {
            channel = channels.get(name);
        }
        if (channel != null) {
            if (!isTicket(message)) {
                channel.signal(READ_UNLOCK_MESSAGE.equals(message));
                return;
            }
            Runnable grant = channel.grants.get(message);
            if (grant != null) {
                grant.run();
            } else {
                // Another client's hand-off (or one to a waiter of this client that has ended,
                // whose leave passes it on).
                channel.grantedElsewhere();
            }
        }
    }

    /**
     * The channel every Relock client subscribes to together with {@code channel}, in the same
     * command: nothing is published there, but the difference of the two channels' subscriber
     * counts is exactly how many clients other than Relock's listen (see {@code handoff.lua}).
     * In the same Cluster slot, as the lock's hash tag is its first brace.
     */
    static String relockMark(String channel) {
        return "relock:" + channel;
    }

    /** Whether an unlock message is a hand-off ticket (a number of 2 or more) rather than 0 or 1. */
    static boolean isTicket(String message) {
        if (message.isEmpty() || message.length() > 19) {
            return false;
        }
        for (int i = 0; i < message.length(); i++) {
            if (!Character.isDigit(message.charAt(i))) {
                return false;
            }
        }
        return !UNLOCK_MESSAGE.equals(message) && !READ_UNLOCK_MESSAGE.equals(message);
    }

    private void wakeEveryone() {
        List<Channel> all;
        synchronized (channels) {
            all = new ArrayList<>(channels.values());
        }
        for (Channel channel : all) {
            channel.signal(true);
        }
    }

    /**
     * One subscribed channel with its parked waiters, and this client's turn on the lock: the one
     * waiter queued on Redis for it, the waiters a release of this client may hand its hold to
     * ({@link #takeForHandOver}), and how many hand-overs between its own owners came in a row.
     */
    public final class Channel {

        private final String name;
        private final Parking parking = new Parking(timer);
        /** What to run when a release hands the lock to a waiter of this client, by ticket. */
        private final Map<String, Runnable> grants = new ConcurrentHashMap<>();
        /** The one waiter of this client whose ticket may be queued on Redis; guarded by this. */
        private Acquisition queuedWaiter;
        /** Hand-overs between owners of this client in a row, since the lock last went through Redis; guarded by this. */
        private int localStreak;
        /** Whether the last hand-over between owners of this client saw waiters of other clients queued; guarded by this. */
        private boolean othersQueued;
        private int references; // guarded by channels
        private CompletableFuture<Void> ready;

        private Channel(String name) {
            this.name = name;
        }

        /** How many messages came on this channel so far; read before an attempt, passed to {@link #park}. */
        public long messages() {
            return parking.messages();
        }

        /**
         * Runs {@code wakeUp} once: at once if a message came since the count {@code seen} that
         * this waiter may take, else at the next unlock message that picks it or after
         * {@code timeoutMillis}, whichever is first (see {@link Parking#park}).
         */
        public Waiter park(Runnable wakeUp, long timeoutMillis, long seen) {
            return parking.park(wakeUp, timeoutMillis, seen);
        }

        /** {@link #park(Runnable, long, long)} for {@code acquisition}, which a release may take over instead. */
        Waiter park(Acquisition acquisition, Runnable wakeUp, long timeoutMillis, long seen) {
            return parking.park(acquisition, wakeUp, timeoutMillis, seen);
        }

        /**
         * Runs {@code onGrant} (on the pub/sub thread) when a release publishes {@code ticket}
         * here, until {@link #forgetGrant}. A ticket message is not an unlock message: it wakes
         * no parked waiter.
         */
        public void expectGrant(long ticket, Runnable onGrant) {
            grants.put(Long.toString(ticket), onGrant);
        }

        /** Stops expecting {@code ticket}: its waiter ended (a late ticket is then another client's to it). */
        public void forgetGrant(long ticket) {
            grants.remove(Long.toString(ticket));
        }

        /**
         * Whether {@code waiter} may queue its ticket on Redis: one waiter of this client per lock
         * does, the others wait here until it has no entry any more (see {@link #leaveQueue}).
         */
        synchronized boolean claimQueue(Acquisition waiter) {
            if (queuedWaiter == null) {
                queuedWaiter = waiter;
            }
            return queuedWaiter == waiter;
        }

        /**
         * {@code waiter} has no entry on Redis any more: it left the queue, or it holds the lock
         * ({@code holds}). If it left and was the queued one, the longest parked waiter of this
         * client retries at once and queues in its place, or nothing would queue for them. If it
         * holds, this client needs no place in the queue while it does: its other waiters are
         * handed the lock here, and when the lock goes through Redis again, the release sends
         * one of them to queue behind the clients that waited meanwhile
         * ({@link #releasedThroughRedis()}).
         */
        void leaveQueue(Acquisition waiter, boolean holds) {
            boolean passOn;
            synchronized (this) {
                boolean wasQueued = queuedWaiter == waiter;
                if (wasQueued) {
                    queuedWaiter = null;
                }
                passOn = wasQueued && !holds;
            }
            if (passOn) {
                parking.signal(false);
            }
        }

        private void signal(boolean all) {
            parking.signal(all);
        }

        /** Whether this client has a waiter that may be queued on Redis for this lock. */
        synchronized boolean hasQueuedWaiter() {
            return queuedWaiter != null;
        }

        /**
         * Takes the longest parked waiter that {@code eligible} accepts, so that a release hands it
         * the lock (see {@link Parking#take}): first come, first served, whether or not it is the
         * one holding this client's place in the queue on Redis (that place then passes to the
         * next waiter, see {@link #leaveQueue}); passing it over would starve it. Null if there is
         * none, or if this client has handed the lock between its own owners {@code maxStreak}
         * times in a row while other clients waited: then the lock goes through Redis, to the next
         * of them.
         */
        Acquisition takeForHandOver(Predicate<Acquisition> eligible, int maxStreak) {
            synchronized (this) {
                if (othersQueued && localStreak >= maxStreak) {
                    return null;
                }
            }
            return parking.take(eligible);
        }

        /**
         * Whether the next hand-over ends a run of {@code maxStreak}: it then also asks how many
         * clients other than Relock's listen (Redisson's waiters, which never queue), so that
         * a run within this client ends for them too, not only for queued clients.
         */
        synchronized boolean endsStreak(int maxStreak) {
            return (localStreak + 1) % maxStreak == 0;
        }

        /**
         * A hand-over to {@code receiver} went through; {@code queuedOnRedis} waiters are queued
         * on Redis (and other clients listening, at the end of a run), this client's own entry
         * among them if it has a queued waiter besides the receiver.
         */
        synchronized void handedOver(Acquisition receiver, long queuedOnRedis) {
            localStreak++;
            boolean ownEntry = queuedWaiter != null && queuedWaiter != receiver;
            othersQueued = queuedOnRedis - (ownEntry ? 1 : 0) > 0;
        }

        /**
         * A holder of this client released the lock through Redis (to another client's waiter, or
         * for anyone): the streak of hand-overs ends, and if no waiter of this client is queued on
         * Redis, the longest parked one tries again and queues, or it would wait for a message
         * meant for nobody here.
         */
        void releasedThroughRedis() {
            boolean queued;
            synchronized (this) {
                localStreak = 0;
                queued = queuedWaiter != null;
            }
            if (!queued) {
                parking.signal(false);
            }
        }

        private void grantedElsewhere() {
            Acquisition queued;
            synchronized (this) {
                queued = queuedWaiter;
            }
            if (queued != null) {
                queued.grantedElsewhere();
            }
        }

        /**
         * Hands a wake-up on to another waiter of this client, from one that may have taken an
         * unlock message and ends without trying for it (interrupted, failed, closed).
         */
        void passOn() {
            parking.signal(false);
        }
    }

    /** A wake-up after {@code millis} that no message can trigger (for waiting by backoff). */
    public static Waiter timed(Timer timer, Runnable wakeUp, long millis) {
        Waiter waiter = new Waiter(null, null, wakeUp);
        waiter.setTimeout(timer.newTimeout(t -> waiter.fire(), Math.max(1, millis), TimeUnit.MILLISECONDS));
        return waiter;
    }

    /** A parked wake-up; fires at most once. */
    public static final class Waiter {

        private final Parking parking;
        /** The acquisition that parked, when a release may take it over (see {@link Parking#take}). */
        final Acquisition acquisition;
        private final Runnable wakeUp;
        private final AtomicBoolean fired = new AtomicBoolean();
        private final AtomicBoolean hurried = new AtomicBoolean();
        private volatile Timeout timeout;

        Waiter(Parking parking, Acquisition acquisition, Runnable wakeUp) {
            this.parking = parking;
            this.acquisition = acquisition;
            this.wakeUp = wakeUp;
        }

        void setTimeout(Timeout timeout) {
            this.timeout = timeout;
        }

        /** Makes sure the waiter wakes within {@code millis} (once per waiter; sooner timeouts stand). */
        void fireWithin(Timer timer, long millis) {
            if (!fired.get() && !hurried.getAndSet(true)) {
                Timeout sooner = timer.newTimeout(t -> fire(), Math.max(1, millis), TimeUnit.MILLISECONDS);
                if (fired.get()) {
                    sooner.cancel();
                }
            }
        }

        /** Wakes the waiter now (if it has not woken yet). */
        public void fire() {
            if (!fired.compareAndSet(false, true)) {
                return;
            }
            if (parking != null) {
                parking.remove(this);
            }
            cancelTimeout();
            wakeUp.run();
        }

        /** Whether it woke, or was taken (see {@link #claim()}). */
        boolean woken() {
            return fired.get();
        }

        /**
         * Takes the waiter instead of waking it: true if it had not woken yet, and then it never
         * will; whoever took it drives its acquisition. The caller removes it from its parking.
         */
        boolean claim() {
            return fired.compareAndSet(false, true);
        }

        /**
         * Takes the waiter out of its parking instead of waking it (see {@link #claim()}): true
         * if it had not woken yet.
         */
        boolean take() {
            if (!claim()) {
                return false;
            }
            if (parking != null) {
                parking.remove(this);
            }
            cancelTimeout();
            return true;
        }

        void cancelTimeout() {
            Timeout pending = timeout;
            if (pending != null) {
                pending.cancel();
            }
        }
    }
}
