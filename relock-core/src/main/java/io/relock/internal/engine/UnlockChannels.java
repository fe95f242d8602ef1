package io.relock.internal.engine;

import io.netty.util.Timer;
import io.relock.internal.backend.ChannelCommands;
import io.relock.internal.backend.ChannelListener;
import io.relock.internal.support.Exceptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Unlock notifications over the client's single pub/sub connection. Each channel is subscribed
 * while at least one waiter of this client needs it (reference-counted) and unsubscribed when
 * the last one leaves, unless that one won the lock: then the subscription <i>lingers</i> while
 * this client holds the lock and {@link #LINGER_MILLIS} after ({@link #release(Turn, BooleanSupplier)}),
 * so that the client's next acquire of a contended lock joins it ({@link #joinStanding}) and
 * queues its ticket in its first attempt, without a SUBSCRIBE, a second attempt and an
 * UNSUBSCRIBE.
 *
 * <p>A waiter parks a callback with a timeout; an unlock message runs one parked callback (a
 * read-unlock message runs all of them). Messages are counted per channel, and a release between
 * a waiter's failed attempt and its park is not lost: an unlock message that found nobody parked
 * sends the first waiter to park that missed it straight back, a read-unlock every such waiter
 * (see {@link Parking}). Every wake-up is only a hint: the callback tries to acquire again.
 * After the connection comes back every parked callback runs, since messages may have been
 * missed while it was down.
 *
 * <p>A message that is a number above 1 is a grant's ticket: it goes to the lock's {@link Turn}
 * ({@link Turn#onTicket}), and wakes no parked waiter. Each subscribed channel has its
 * {@link Turn}, the waiters of this client parked there, and the channel's reference count.
 */
public final class UnlockChannels implements ChannelListener {

    private static final Logger LOG = LoggerFactory.getLogger(UnlockChannels.class);

    /** Message published when a lock is released. */
    public static final String UNLOCK_MESSAGE = "0";
    /** Message published when a read lock is released: every waiter may proceed. */
    public static final String READ_UNLOCK_MESSAGE = "1";

    /** How often a cluster client subscribes its channels again while its slot map is unsettled (see {@link #topologyChanged}). */
    static final long RESUBSCRIBE_PERIOD_MILLIS = 500;
    /** How many of those rounds without a slot-map change count as settled: five seconds. */
    static final int SETTLE_ROUNDS = 10;
    /**
     * How long a subscription lingers after the last waiter that won the lock gave it back and
     * this client stopped holding the lock: long enough for a participant that asks again soon
     * after its hold (the common case under contention), short enough that an idle client
     * listens to next to nothing.
     */
    public static final long LINGER_MILLIS = 100;

    private final ChannelCommands commands;
    private final Timer timer;
    private final boolean sharded;
    private final Map<String, Turn> channels = new HashMap<>();
    /** Rounds of subscribing again left before the slot map counts as settled; guarded by channels. */
    private int unsettledRounds;
    /** Whether a round is scheduled; guarded by channels. */
    private boolean settling;

    /**
     * Channels whose subscriptions {@code commands} sends; messages and connects come in through
     * {@link #onMessage} and {@link #onConnected}.
     *
     * @param sharded whether subscriptions are sharded (SSUBSCRIBE), as the release scripts of a
     *     Redis 7+ cluster SPUBLISH
     */
    public UnlockChannels(ChannelCommands commands, Timer timer, boolean sharded) {
        this.commands = commands;
        this.timer = timer;
        this.sharded = sharded;
    }

    /** Subscribes (or joins an existing subscription); completes when the server confirmed it. */
    public CompletableFuture<Turn> subscribe(String name) {
        Turn channel;
        synchronized (channels) {
            channel = channels.get(name);
            if (channel == null) {
                channel = new Turn(name, new Parking(timer));
                channels.put(name, channel);
                channel.ready = commands.subscribe(name);
            }
            channel.references++;
        }
        Turn subscribed = channel;
        return channel.ready.handle((ignored, error) -> {
            if (error != null) {
                release(subscribed);
                throw Exceptions.translate("subscribe to " + name, error);
            }
            return subscribed;
        });
    }

    /**
     * Joins the subscription to channel {@code name} if one stands and the server confirmed it
     * (a waiter of this client is subscribed, or the subscription lingers), without any command;
     * else null, and the caller subscribes when it needs to.
     */
    public Turn joinStanding(String name) {
        synchronized (channels) {
            Turn channel = channels.get(name);
            if (channel == null || !channel.ready.isDone() || channel.ready.isCompletedExceptionally()) {
                return null;
            }
            channel.references++;
            return channel;
        }
    }

    /** Leaves a subscription; the last one out unsubscribes. */
    public void release(Turn channel) {
        release(channel, null);
    }

    /**
     * Leaves a subscription. When the last one out leaves it with {@code holding} (it won the
     * lock), the subscription lingers as long as {@code holding} says this client holds the lock
     * and {@link #LINGER_MILLIS} after, then unsubscribes if nobody joined it meanwhile; with
     * {@code holding} null, the last one out unsubscribes at once.
     */
    public void release(Turn channel, BooleanSupplier holding) {
        synchronized (channels) {
            if (--channel.references > 0) {
                return;
            }
            if (holding == null) {
                unsubscribe(channel);
                return;
            }
            long round = ++channel.lingerRounds;
            timer.newTimeout(timeout -> endLinger(channel, round, holding), LINGER_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** The linger of round {@code round} is up: unsubscribes, unless joined since or still held. */
    private void endLinger(Turn channel, long round, BooleanSupplier holding) {
        // Asked outside the map's lock: the watchdog is not to be called under it.
        boolean held = holding.getAsBoolean();
        synchronized (channels) {
            if (channel.references > 0 || channel.lingerRounds != round || channels.get(channel.name) != channel) {
                // Joined since (its last waiter out lingers anew, or unsubscribes), or gone.
                return;
            }
            if (held) {
                timer.newTimeout(timeout -> endLinger(channel, round, holding), LINGER_MILLIS, TimeUnit.MILLISECONDS);
                return;
            }
            unsubscribe(channel);
        }
    }

    /** Unsubscribes; guarded by the map's lock. */
    private void unsubscribe(Turn channel) {
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

    /** The turn on channel {@code name} if a waiter of this client is subscribed to it, else null; takes no reference. */
    Turn existing(String name) {
        synchronized (channels) {
            return channels.get(name);
        }
    }

    /** How many channels this client is subscribed to, lingering ones included (for tests and the inspector). */
    public int subscribedChannels() {
        synchronized (channels) {
            return channels.size();
        }
    }

    /** How many channels a waiter of this client is subscribed to, lingering ones left out. */
    public int waitedOnChannels() {
        synchronized (channels) {
            return (int) channels.values().stream().filter(channel -> channel.references > 0).count();
        }
    }

    @Override
    public void onMessage(String name, String message) {
        Turn turn;
        synchronized (channels) {
            turn = channels.get(name);
        }
        if (turn == null) {
            return;
        }
        if (isTicket(message)) {
            turn.onTicket(message);
        } else {
            turn.signal(READ_UNLOCK_MESSAGE.equals(message));
        }
    }

    /** Whether a message is a grant's ticket (a number of 2 or more) rather than an unlock message, 0 or 1. */
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

    /** The connection is up (again): messages may have been missed, so every parked waiter tries again. */
    @Override
    public void onConnected() {
        wakeEveryone();
    }

    private void wakeEveryone() {
        List<Turn> all;
        synchronized (channels) {
            all = new ArrayList<>(channels.values());
        }
        for (Turn channel : all) {
            channel.signal(true);
        }
    }
}
