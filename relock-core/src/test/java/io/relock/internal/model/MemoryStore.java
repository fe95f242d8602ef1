package io.relock.internal.model;

import io.relock.internal.backend.Grants;
import io.relock.internal.backend.Renewal;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.backend.WriteConfirmation;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A model of what Relock's Redis scripts keep for the reentrant, fenced and simple locks, in
 * memory, with the scripts' effects reply for reply: per lock key its owners' fields and hold
 * counts (or a simple lock's token), the hand-off bookkeeping ({@code relock:queued},
 * {@code relock:granted}) and its expiry; the ticket queue ({@code {name}:handoff}) with each
 * entry's deadline and the queue's own expiry; the fencing token counter ({@code {name}:token}),
 * which only grows and never expires; and the note a force-release leaves for the removed holders'
 * watchdogs ({@code relock:forced}). Time is a model clock that only the test moves
 * ({@link #advance}); a key is gone once the clock is past its expiry, as Redis judges it.
 *
 * <p>Commands reach it through a {@link Connection}, whose {@link Connection#reentrant},
 * {@link Connection#fenced} and {@link Connection#simple} give the lock drivers and
 * {@link Connection#renewals()} the watchdog's renewals. An immediate connection runs each command
 * as it is sent. A deferred one keeps them in order, as Redis keeps one connection's: the test
 * runs the oldest on the store ({@link Connection#apply()}) and hands its reply back
 * ({@link Connection#reply()}) when it chooses, so a model checker can interleave replies with
 * everything else. What a command publishes reaches the {@link #subscribe subscriber} after its
 * reply.
 *
 * <p>Left out: clients other than Relock's listening on a lock's channel (Redisson's waiters), so
 * no release yields; the fair and read-write layouts; data under a lock's key that no lock wrote.
 * {@code MemoryStoreAgreesWithRedisTest} runs random sequences on it and on a real Redis and
 * compares every reply, the state after each step and the messages it published; relock-jdbc's
 * {@code MemoryStoreAgreesWithPostgresTest} compares replies and state with the PostgreSQL lease
 * table wherever that does what Redis does.
 */
public final class MemoryStore {

    /** The model clock's start, in ms: far from 0, so that a deadline computed from 0 shows. */
    private static final long EPOCH_MILLIS = 1_000_000;
    /** How far the last ticket's deadline lies beyond the holder's lease (lock_acquire.lua). */
    private static final long TICKET_GRACE_MILLIS = 5000;

    private long now = EPOCH_MILLIS; // guarded by this
    private final long forcedNoteMillis;
    private final Map<String, Lock> locks = new HashMap<>(); // guarded by this
    private final Map<String, Queue> queues = new HashMap<>(); // guarded by this
    private final Map<String, Long> tokens = new HashMap<>(); // guarded by this
    private final Map<String, Note> forced = new HashMap<>(); // guarded by this
    /** What the command being applied publishes, as channel and message pairs; null between commands. */
    private List<String[]> publishing; // guarded by this
    private volatile BiConsumer<String, String> subscriber = (channel, message) -> { };
    private volatile Consumer<String> afterEach = script -> { };
    // Per store, not static: Lincheck cannot restore a record class's static fields between runs.
    private final WriteConfirmation confirmed = new WriteConfirmation(WriteConfirmation.Outcome.CONFIRMED, 0);
    private final Renewal hashRenewal = new Marker("lock_renew");
    private final Renewal stringRenewal = new Marker("simple_renew");

    /** A store whose force-release notes live one default watchdog timeout (30 s). */
    public MemoryStore() {
        this(30_000);
    }

    /** A store whose force-release notes live {@code forcedNoteMillis} (a driver's watchdog timeout). */
    public MemoryStore(long forcedNoteMillis) {
        this.forcedNoteMillis = forcedNoteMillis;
    }

    /** What the lock key holds: a hash of owners' counts and bookkeeping, or a simple lock's token. */
    private static final class Lock {
        final boolean hash;
        final LinkedHashMap<String, Integer> holds = new LinkedHashMap<>();
        String granted;
        boolean queued;
        long expiresAt;

        Lock(boolean hash) {
            this.hash = hash;
        }

        boolean empty() {
            return holds.isEmpty() && granted == null && !queued;
        }
    }

    /** A queued ticket: member {@code <owner field>:<ticket>}, scored by its deadline. */
    private record Entry(String member, long deadline) {}

    /** The ticket queue, a sorted set: by deadline, then by member, as ZRANGE orders them. */
    private static final class Queue {
        final TreeSet<Entry> entries = new TreeSet<>(
                Comparator.comparingLong(Entry::deadline).thenComparing(Entry::member));
        long expiresAt;

        boolean remove(String member) {
            return entries.removeIf(entry -> entry.member().equals(member));
        }
    }

    /** A force-release's note: the removed holders, living until {@code expiresAt}. */
    private static final class Note {
        final List<String> fields = new ArrayList<>();
        long expiresAt;
    }

    private record Marker(String name) implements Renewal {}

    // ---- what the test does ---------------------------------------------------------------------

    /** Where published messages go, as (channel, message), each after its command's reply. */
    public void subscribe(BiConsumer<String, String> subscriber) {
        this.subscriber = subscriber;
    }

    /**
     * Called with the script's name after each command took effect, under the store's monitor:
     * the moment a test records what a step changed, before any reply is seen.
     */
    public void afterEachCommand(Consumer<String> hook) {
        this.afterEach = hook;
    }

    /** The model clock moves on: keys past their expiry are gone. */
    public synchronized void advance(long millis) {
        now += millis;
    }

    public synchronized long now() {
        return now;
    }

    /**
     * Runs {@code action} with no command in between, as a MULTI/EXEC would. A model checker takes
     * it as one step, so it must not hand a reply or a message to code under test.
     */
    public synchronized <T> T atomically(Supplier<T> action) {
        return action.get();
    }

    /** A connection whose commands run as they are sent. */
    public Connection immediate() {
        return new Connection(false);
    }

    /** A connection whose commands wait, in order, until the test applies and answers them. */
    public Connection deferred() {
        return new Connection(true);
    }

    // ---- reads for checks, not commands ---------------------------------------------------------

    /** The owners of the lock under {@code key} and their hold counts (a simple lock's token with 1), in field order. */
    public synchronized Map<String, Integer> holders(String key) {
        Lock lock = lock(key);
        return lock == null ? Map.of() : new LinkedHashMap<>(lock.holds);
    }

    /** {@code field}'s hold count (HGET; for a simple lock, 1 if it holds the token). */
    public synchronized int holdCount(String key, String field) {
        Lock lock = lock(key);
        return lock == null ? 0 : lock.holds.getOrDefault(field, 0);
    }

    /** The ticket the lock is granted to and not yet claimed ({@code relock:granted}), or null. */
    public synchronized String granted(String key) {
        Lock lock = lock(key);
        return lock == null ? null : lock.granted;
    }

    /** Whether the lock carries {@code relock:queued}. */
    public synchronized boolean queuedNote(String key) {
        Lock lock = lock(key);
        return lock != null && lock.queued;
    }

    /** The queue's members ({@code <field>:<ticket>}) in their order. */
    public synchronized List<String> queue(String key) {
        Queue queue = queue(key, false);
        return queue == null ? List.of() : queue.entries.stream().map(Entry::member).toList();
    }

    /** The fencing token counter, null before the first fenced acquire. */
    public synchronized Long tokenCounter(String key) {
        return tokens.get(key);
    }

    /** PTTL of the lock key: ms left, -2 when there is none. */
    public synchronized long ttl(String key) {
        return pttl(key);
    }

    /** The holders a force-release removed lately, as its live note lists them. */
    public synchronized List<String> forcedNote(String key) {
        Note note = note(key);
        return note == null ? List.of() : List.copyOf(note.fields);
    }

    // ---- keys and time, as Redis keeps them -------------------------------------------------------

    private Lock lock(String key) {
        Lock lock = locks.get(key);
        if (lock != null && now > lock.expiresAt) {
            locks.remove(key);
            return null;
        }
        return lock;
    }

    private Queue queue(String key, boolean create) {
        Queue queue = queues.get(key);
        if (queue != null && (now > queue.expiresAt || queue.entries.isEmpty())) {
            queues.remove(key);
            queue = null;
        }
        if (queue == null && create) {
            queue = new Queue();
            queue.expiresAt = Long.MAX_VALUE;
            queues.put(key, queue);
        }
        return queue;
    }

    private Note note(String key) {
        Note note = forced.get(key);
        if (note != null && now > note.expiresAt) {
            forced.remove(key);
            return null;
        }
        return note;
    }

    private long pttl(String key) {
        Lock lock = lock(key);
        return lock == null ? -2 : lock.expiresAt - now;
    }

    private Lock newLock(String key, boolean hash) {
        Lock lock = new Lock(hash);
        lock.expiresAt = Long.MAX_VALUE;
        locks.put(key, lock);
        return lock;
    }

    private void pexpire(Lock lock, long millis) {
        if (lock != null) {
            lock.expiresAt = now + millis;
        }
    }

    /** Redis deletes a hash whose last field went. */
    private void tidy(String key) {
        Lock lock = locks.get(key);
        if (lock != null && lock.empty()) {
            locks.remove(key);
        }
    }

    private int zcard(String key) {
        Queue queue = queue(key, false);
        return queue == null ? 0 : queue.entries.size();
    }

    private void zrem(String key, String member) {
        Queue queue = queue(key, false);
        if (queue != null) {
            queue.remove(member);
            queue(key, false);
        }
    }

    private void publish(String channel, String message) {
        publishing.add(new String[] {channel, message});
    }

    private boolean wasForced(String key, String field) {
        Note note = note(key);
        return note != null && note.fields.contains(field);
    }

    // ---- the scripts ------------------------------------------------------------------------------

    /** lock_acquire.lua. */
    private Long lockAcquire(String key, long lease, String field, boolean countsReentry, int countBefore,
            String ticket, String queued, boolean repeat) {
        Lock lock = lock(key);
        int count = lock == null ? 0 : lock.holds.getOrDefault(field, 0);
        if (repeat && count == countBefore + 1) {
            if (!queued.equals("0") && lock != null) {
                lock.granted = null;
                tidy(key);
            }
            pexpire(lock, lease);
            return null;
        }
        if (ticket.equals("0") && queued.equals("0") && lock == null && queue(key, false) == null) {
            lock = newLock(key, true);
            lock.holds.put(field, 1);
            pexpire(lock, lease);
            return null;
        }
        if (lock != null && lock.holds.containsKey(field)) {
            if (!queued.equals("0") && queued.equals(lock.granted)) {
                // The claim of a grant: the grant is the hold.
                lock.granted = null;
                pexpire(lock, lease);
                return null;
            }
            lock.holds.put(field, countsReentry ? count + 1 : 1);
            pexpire(lock, lease);
            if (!queued.equals("0")) {
                zrem(key, field + ":" + queued);
            }
            return null;
        }
        long ttl = pttl(key);
        if (ttl == -2) {
            // Free with waiters queued (no yield in the model): taken, the queue noted.
            lock = newLock(key, true);
            lock.holds.put(field, 1);
            pexpire(lock, lease);
            if (!queued.equals("0")) {
                zrem(key, field + ":" + queued);
            }
            if (zcard(key) > 0) {
                lock.queued = true;
            }
            return null;
        }
        if (!queued.equals("0")) {
            zrem(key, field + ":" + queued);
        }
        if (!ticket.equals("0")) {
            long deadline = now + Math.max(ttl, 0) + TICKET_GRACE_MILLIS;
            Queue queue = queue(key, true);
            if (!queue.entries.isEmpty() && queue.entries.last().deadline() >= deadline) {
                deadline = queue.entries.last().deadline() + 1;
            }
            // ZADD of a member already there moves it.
            String member = field + ":" + ticket;
            queue.remove(member);
            queue.entries.add(new Entry(member, deadline));
            queue.expiresAt = deadline;
            lock.queued = true;
        }
        return ttl;
    }

    /** lock_release.lua. */
    private Long lockRelease(String key, String channel, String field, long lease, int countAfter, String message,
            boolean repeat) {
        Lock lock = lock(key);
        int count = lock == null ? 0 : lock.holds.getOrDefault(field, 0);
        if (repeat && count == countAfter) {
            return count > 0 ? 0L : 1L;
        }
        if (count == 0) {
            return null;
        }
        if (count > 1) {
            lock.holds.put(field, count - 1);
            if (lease != 0) {
                pexpire(lock, lease);
            }
            return 0L;
        }
        if (!lock.queued) {
            locks.remove(key);
            publish(channel, message);
            return 1L;
        }
        passOn(key, channel, field, message);
        return 1L;
    }

    /** grant.lua's relock_pass_on: to the first live ticket of another owner, else free. */
    private void passOn(String key, String channel, String releaser, String message) {
        Queue queue;
        while ((queue = queue(key, false)) != null) {
            Entry first = queue.entries.first();
            boolean second = queue.entries.size() > 1;
            queue.entries.remove(first);
            String member = first.member();
            int cut = member.lastIndexOf(':');
            String field = member.substring(0, cut);
            String ticket = member.substring(cut + 1);
            if (first.deadline() > now && !field.equals(releaser)) {
                Lock lock = newLock(key, true);
                lock.holds.put(field, 1);
                lock.granted = ticket;
                lock.queued = second;
                pexpire(lock, Grants.LEASE_MILLIS);
                publish(channel, ticket);
                return;
            }
        }
        locks.remove(key);
        queues.remove(key);
        publish(channel, message);
    }

    /** grant.lua's relock_drop_hold. */
    private void dropHold(String key, String channel, String field, int count, String message) {
        Lock lock = lock(key);
        if (count > 1) {
            lock.holds.put(field, count - 1);
            return;
        }
        lock.holds.remove(field);
        if (lock.holds.isEmpty()) {
            if (lock.queued) {
                passOn(key, channel, field, message);
            } else {
                locks.remove(key);
                publish(channel, message);
            }
        }
    }

    /** lock_rollback.lua. */
    private long lockRollback(String key, String channel, String field, int countBefore, String message) {
        int count = holdCount(key, field);
        if (count != countBefore + 1) {
            return 0;
        }
        dropHold(key, channel, field, count, message);
        return 1;
    }

    /** lock_leave.lua. */
    private long lockLeave(String key, String channel, String field, String ticket, String message) {
        zrem(key, field + ":" + ticket);
        Lock lock = lock(key);
        if (lock == null || !ticket.equals(lock.granted)) {
            return 0;
        }
        lock.granted = null;
        int count = lock.holds.getOrDefault(field, 0);
        if (count == 0) {
            tidy(key);
            return 0;
        }
        dropHold(key, channel, field, count, message);
        return 1;
    }

    /** lock_hand_over.lua, with nobody but Relock's clients listening. */
    private List<Object> lockHandOver(String key, String from, String to, long lease, String toTicket, boolean repeat) {
        Lock lock = lock(key);
        int count = lock == null ? 0 : lock.holds.getOrDefault(from, 0);
        if (count != 1) {
            if (repeat && count == 0 && lock != null && lock.holds.getOrDefault(to, 0) == 1) {
                return List.of((long) zcard(key), 0L);
            }
            return List.of(-1L, 0L);
        }
        lock.holds.remove(from);
        lock.holds.put(to, 1);
        pexpire(lock, lease);
        if (!toTicket.equals("0")) {
            zrem(key, to + ":" + toTicket);
        }
        return List.of((long) zcard(key), 0L);
    }

    /** fenced_acquire.lua: {1, token} or {0, ttl}. */
    private long[] fencedAcquire(String key, long lease, String field, int countBefore, boolean takeOver,
            boolean repeat) {
        Lock lock = lock(key);
        int count = lock == null ? 0 : lock.holds.getOrDefault(field, 0);
        if (repeat && count == countBefore + 1) {
            pexpire(lock, lease);
            return new long[] {1, tokens.get(key)};
        }
        if (lock == null) {
            lock = newLock(key, true);
            lock.holds.put(field, 1);
            pexpire(lock, lease);
            return new long[] {1, tokens.merge(key, 1L, Long::sum)};
        }
        if (count > 0) {
            pexpire(lock, lease);
            if (takeOver) {
                lock.holds.put(field, 1);
                return new long[] {1, tokens.merge(key, 1L, Long::sum)};
            }
            lock.holds.put(field, count + 1);
            return new long[] {1, tokens.get(key)};
        }
        return new long[] {0, pttl(key)};
    }

    /** fenced_token.lua. */
    private Long fencedToken(String key) {
        return lock(key) == null ? null : tokens.get(key);
    }

    /** simple_acquire.lua: nil acquired, -3 held by the caller already, else the TTL. */
    private Long simpleAcquire(String key, long lease, String field, boolean repeat) {
        Lock lock = lock(key);
        if (lock == null) {
            lock = newLock(key, false);
            lock.holds.put(field, 1);
            pexpire(lock, lease);
            return null;
        }
        if (lock.holds.containsKey(field)) {
            if (repeat) {
                pexpire(lock, lease);
                return null;
            }
            return -3L;
        }
        return pttl(key);
    }

    /** simple_release.lua. */
    private Long simpleRelease(String key, String channel, String message, String field, boolean repeat) {
        Lock lock = lock(key);
        if (lock != null && lock.holds.containsKey(field)) {
            locks.remove(key);
            publish(channel, message);
            return 1L;
        }
        return repeat ? 1L : null;
    }

    /** Whether {@code field} holds the lock in its layout (HEXISTS, or GET equal). */
    private boolean holds(String key, String field, boolean hash) {
        Lock lock = lock(key);
        return lock != null && lock.hash == hash && lock.holds.containsKey(field);
    }

    /** lock_renew.lua and simple_renew.lua, one entry per key. */
    private List<Object> renew(boolean hash, String[] keys, String[] args) {
        long lease = Long.parseLong(args[0]);
        List<Object> renewed = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            if (holds(keys[i], args[i + 1], hash)) {
                pexpire(lock(keys[i]), lease);
                renewed.add(1L);
            } else {
                renewed.add(wasForced(keys[i], args[i + 1]) ? 2L : 0L);
            }
        }
        return renewed;
    }

    /** lock_keep.lua. */
    private long keep(String key, String channel, long keepMillis, String field, boolean hash, String message) {
        if (!holds(key, field, hash)) {
            return wasForced(key, field) ? 2 : 0;
        }
        pexpire(lock(key), keepMillis);
        publish(channel, message);
        return 1;
    }

    /** lock_force_release.lua, judged by lock_rule.lua: 1 removed, 0 no lock of this layout, -1 not a lock. */
    private long forceRelease(String key, String channel, String message, boolean hash) {
        Lock lock = lock(key);
        if (lock == null) {
            return 0;
        }
        if (lock.holds.isEmpty() || !lock.holds.keySet().stream().allMatch(MemoryStore::isOwnerField)
                || (!lock.hash && pttl(key) <= 0)) {
            return -1;
        }
        if (lock.hash != hash) {
            return 0;
        }
        locks.remove(key);
        Note note = note(key);
        if (note == null) {
            note = new Note();
            forced.put(key, note);
        }
        for (String field : lock.holds.keySet()) {
            if (!note.fields.contains(field)) {
                note.fields.add(field);
            }
        }
        note.expiresAt = now + forcedNoteMillis;
        publish(channel, message);
        return 1;
    }

    /**
     * lock_rule.lua's owner field: a client's UUID ({@code 8-4-4-4-12} hex digits) and an owner id.
     * Written out rather than as a regular expression, which Lincheck cannot walk through.
     */
    static boolean isOwnerField(String field) {
        int at = 0;
        for (int group : new int[] {8, 4, 4, 4, 12}) {
            for (int i = 0; i < group; i++, at++) {
                if (at >= field.length() || Character.digit(field.charAt(at), 16) < 0) {
                    return false;
                }
            }
            char separator = group == 12 ? ':' : '-';
            if (at >= field.length() || field.charAt(at++) != separator) {
                return false;
            }
        }
        if (at < field.length() && field.charAt(at) == '-') {
            at++;
        }
        if (at == field.length()) {
            return false;
        }
        for (; at < field.length(); at++) {
            if (field.charAt(at) < '0' || field.charAt(at) > '9') {
                return false;
            }
        }
        return true;
    }

    // ---- connections and drivers --------------------------------------------------------------

    /** A command answered: its script and its reply (null for a nil reply or a failure). */
    public record Replied(String script, Object value) {}

    /** One script call: what it does on the store, and, once applied, its reply and what it published. */
    private final class Command<T> {
        final String script;
        final Supplier<T> effect;
        final CompletableFuture<T> reply = new CompletableFuture<>();
        T value;
        RuntimeException error;
        List<String[]> published = List.of();

        Command(String script, Supplier<T> effect) {
            this.script = script;
            this.effect = effect;
        }

        /** Runs the script on the store, under its monitor. */
        void apply() {
            publishing = new ArrayList<>();
            try {
                value = effect.get();
            } catch (RuntimeException e) {
                error = e;
            } finally {
                published = publishing;
                publishing = null;
            }
            afterEach.accept(script);
        }

        /** Hands the reply back, then delivers what the script published; outside the store's monitor. */
        Replied answer() {
            if (error != null) {
                reply.completeExceptionally(error);
            } else {
                reply.complete(value);
            }
            for (String[] message : published) {
                subscriber.accept(message[0], message[1]);
            }
            return new Replied(script, value);
        }
    }

    // Every use of the store's monitor is one of its own methods (none in a nested class), so that a
    // model checker may take each of them as one step (ModelScenarios.storeCallsAtomic()).

    private synchronized void enqueue(Connection connection, Command<?> command) {
        connection.sent.addLast(command);
    }

    private synchronized void applyNow(Command<?> command) {
        command.apply();
    }

    private synchronized boolean applyNext(Connection connection) {
        Command<?> command = connection.sent.pollFirst();
        if (command == null) {
            return false;
        }
        command.apply();
        connection.applied.addLast(command);
        return true;
    }

    private synchronized Command<?> nextReply(Connection connection) {
        return connection.applied.pollFirst();
    }

    private synchronized int inFlight(Connection connection) {
        return connection.sent.size() + connection.applied.size();
    }

    /**
     * One client's connection to the store. Deferred, it keeps the commands sent ({@link #apply()}
     * runs the oldest) and those applied whose reply has not come back ({@link #reply()} hands back
     * the oldest), each in the order sent.
     */
    public final class Connection {

        private final boolean deferred;
        final ArrayDeque<Command<?>> sent = new ArrayDeque<>(); // guarded by the store
        final ArrayDeque<Command<?>> applied = new ArrayDeque<>(); // guarded by the store

        private Connection(boolean deferred) {
            this.deferred = deferred;
        }

        <T> CompletableFuture<T> send(String script, Supplier<T> effect) {
            Command<T> command = new Command<>(script, effect);
            if (deferred) {
                enqueue(this, command);
            } else {
                applyNow(command);
                command.answer();
            }
            return command.reply;
        }

        /** Runs the oldest command sent on the store; its reply waits. False if none was waiting. */
        public boolean apply() {
            return applyNext(this);
        }

        /** Hands back the reply of the oldest command applied, then what it published; null if none. */
        public Replied reply() {
            Command<?> command = nextReply(this);
            return command == null ? null : command.answer();
        }

        /** Runs the oldest command sent and hands its reply back; null if nothing was sent. */
        public Replied deliver() {
            apply();
            return reply();
        }

        /** Commands sent whose reply has not come back. */
        public int inFlight() {
            return MemoryStore.this.inFlight(this);
        }

        /** The reentrant lock (lock_*.lua, grant.lua) on {@code key}, announcing on {@code channel}. */
        public ModelDrivers.Reentrant reentrant(String key, String channel) {
            return new ModelDrivers.Reentrant(this, key, channel);
        }

        /** The fenced lock (fenced_*.lua, the reentrant release) on {@code key}. */
        public ModelDrivers.Fenced fenced(String key, String channel) {
            return new ModelDrivers.Fenced(this, key, channel);
        }

        /** The simple lock (simple_*.lua) on {@code key}. */
        public ModelDrivers.Simple simple(String key, String channel) {
            return new ModelDrivers.Simple(this, key, channel);
        }

        /** The watchdog's side of this connection: batched renewals, every write confirmed. */
        public RenewalGateway renewals() {
            return new RenewalGateway() {
                @Override
                public int slotOf(String key) {
                    return 0;
                }

                @Override
                public CompletableFuture<List<Object>> renew(Renewal renewal, String[] keys, String[] args) {
                    boolean hash = renewal == hashRenewal;
                    if (!hash && renewal != stringRenewal) {
                        throw new IllegalArgumentException("not the model's renewal: " + renewal);
                    }
                    return send(hash ? "lock_renew" : "simple_renew", () -> MemoryStore.this.renew(hash, keys, args));
                }

                @Override
                public long connectionEpoch() {
                    return 0;
                }

                @Override
                public CompletableFuture<WriteConfirmation> confirmWrite(String key, long epochBefore) {
                    return CompletableFuture.completedFuture(confirmed);
                }

                @Override
                public int replicaSyncMinReplicas() {
                    return 0;
                }

                @Override
                public long replicaSyncTimeoutMillis() {
                    return 0;
                }
            };
        }

        // The scripts as the drivers call them: one command each.

        CompletableFuture<Long> lockAcquire(String key, long lease, String field, boolean countsReentry,
                int countBefore, String ticket, String queued, boolean repeat) {
            return send("lock_acquire", () -> MemoryStore.this.lockAcquire(key, lease, field, countsReentry,
                    countBefore, ticket, queued, repeat));
        }

        CompletableFuture<Long> lockRelease(String key, String channel, String field, long lease, int countAfter,
                String message, boolean repeat) {
            return send("lock_release", () -> MemoryStore.this.lockRelease(key, channel, field, lease, countAfter,
                    message, repeat));
        }

        CompletableFuture<Long> lockRollback(String key, String channel, String field, int countBefore,
                String message) {
            return send("lock_rollback", () -> MemoryStore.this.lockRollback(key, channel, field, countBefore, message));
        }

        CompletableFuture<Long> lockLeave(String key, String channel, String field, String ticket, String message) {
            return send("lock_leave", () -> MemoryStore.this.lockLeave(key, channel, field, ticket, message));
        }

        CompletableFuture<List<Object>> lockHandOver(String key, String from, String to, long lease, String toTicket) {
            return send("lock_hand_over", () -> MemoryStore.this.lockHandOver(key, from, to, lease, toTicket, false));
        }

        CompletableFuture<long[]> fencedAcquire(String key, long lease, String field, int countBefore,
                boolean takeOver, boolean repeat) {
            return send("fenced_acquire", () -> MemoryStore.this.fencedAcquire(key, lease, field, countBefore,
                    takeOver, repeat));
        }

        CompletableFuture<Long> fencedToken(String key) {
            return send("fenced_token", () -> MemoryStore.this.fencedToken(key));
        }

        CompletableFuture<Long> simpleAcquire(String key, long lease, String field, boolean repeat) {
            return send("simple_acquire", () -> MemoryStore.this.simpleAcquire(key, lease, field, repeat));
        }

        CompletableFuture<Long> simpleRelease(String key, String channel, String message, String field,
                boolean repeat) {
            return send("simple_release", () -> MemoryStore.this.simpleRelease(key, channel, message, field, repeat));
        }

        CompletableFuture<Long> keep(String key, String channel, long keepMillis, String field, boolean hash,
                String message) {
            return send("lock_keep", () -> MemoryStore.this.keep(key, channel, keepMillis, field, hash, message));
        }

        CompletableFuture<Long> forceRelease(String key, String channel, String message, boolean hash) {
            return send("lock_force_release", () -> MemoryStore.this.forceRelease(key, channel, message, hash));
        }

        /** HGET (a hash lock) or GET compared (a simple lock). */
        CompletableFuture<Integer> holdCount(String key, String field, boolean hash) {
            return send(hash ? "hget" : "get", () -> {
                Lock lock = lock(key);
                if (lock == null) {
                    return 0;
                }
                return hash ? lock.holds.getOrDefault(field, 0) : lock.holds.containsKey(field) ? 1 : 0;
            });
        }

        CompletableFuture<Boolean> exists(String key) {
            return send("exists", () -> lock(key) != null);
        }

        Renewal renewal(boolean hash) {
            return hash ? hashRenewal : stringRenewal;
        }
    }
}
