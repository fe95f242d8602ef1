package io.relock.internal.model;

import io.relock.internal.backend.Budget;
import io.relock.internal.backend.RenewalGateway;
import io.relock.internal.engine.LockDriver;
import io.relock.internal.engine.LockDriver.Attempt;
import io.relock.internal.engine.LockDriver.Request;
import io.relock.internal.types.TokenDriver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A differential test's engine: seeded random sequences of lock operations (acquires with leases
 * by several owners of two clients, re-entries, take-overs of forgotten holds, releases by holders
 * and by others, undos, force-releases, reads of the hold count, the lock and the token, batched
 * renewals, keeps; where the back end takes turns, tickets queued and left, grants claimed and
 * hand-overs), each applied to a {@link MemoryStore} and to a real back end, every reply compared,
 * and the state of every lock the step touched compared after it, and where the back end's
 * announcements can be heard, the messages the step published. A failure names the seed, the
 * step and the steps before it.
 *
 * <p>Time: the model's clock stands still while the back end's runs, so leases are long (minutes)
 * and nothing expires during a sequence; a lease left is compared within {@link #TTL_SLACK_MILLIS}.
 * A grant's lease is short (2 s), so a grant is claimed in the step that made it.
 *
 * <p>What a back end does differently on purpose is set in its {@link Rules}, with the reason at the
 * test that sets it; the engine compares only what both do.
 */
public final class Differential {

    /** How far a back end's lease left may lag the model's (time passes there, not in the model). */
    public static final long TTL_SLACK_MILLIS = 60_000;
    private static final long[] OWNERS = {1, 2, -3};
    private static final int LOG_LINES = 12;

    /** The lock types both sides may have. */
    public enum Type {
        REENTRANT, FENCED, SIMPLE
    }

    /** A real back end, as the differential drives it; a lock's key is its name. */
    public interface Backend {

        /** The back end's driver of lock {@code name} of {@code type} (a {@link TokenDriver} for a fenced one). */
        LockDriver driver(Type type, String name);

        /** Where its renewals go. */
        RenewalGateway renewals();

        /** The budget of one call. */
        Budget budget();

        /** What it holds for lock {@code name} now. */
        State state(Type type, String name);

        /** Where the releases of lock {@code name} are announced. */
        default String channel(String name) {
            return name;
        }

        /**
         * The messages published since the last call, each {@code "<channel> <message>"}, in order;
         * null where the back end's announcements are not compared.
         */
        default List<String> published() {
            return null;
        }
    }

    /**
     * What a side holds for one lock: its holders and their counts, the lease left (-2: free), the
     * fencing token counter (null where a side keeps none, or keeps it otherwise), and the
     * bookkeeping of hand-offs and force-releases (null where a side keeps none).
     */
    public record State(Map<String, Integer> holders, long ttlMillis, Long token, List<String> bookkeeping) {}

    /** What a back end does differently on purpose; each setter turns one thing off. */
    public static final class Rules {
        boolean turns = true;
        boolean repeats = true;
        boolean tokenValues = true;
        boolean tokensOnEveryType;
        boolean keepManyHolds = true;
        boolean forcedNotes = true;
        long[] leases = {300_000, 420_000, 600_000};

        /** Its waiters take no turns: no tickets, grants, hand-overs. */
        public Rules noTurns() {
            turns = false;
            return this;
        }

        /** Its calls are never sent twice, so none is marked a repeat. */
        public Rules noRepeats() {
            repeats = false;
            return this;
        }

        /** Its tokens are other numbers: compared by order (a new holder's is greater, a re-entry's the same). */
        public Rules tokensByOrder() {
            tokenValues = false;
            return this;
        }

        /** Every type's acquire answers a token: compared only for the fenced lock. */
        public Rules tokensOnEveryType() {
            tokensOnEveryType = true;
            return this;
        }

        /** Keeps only a last hold, as the engine asks. */
        public Rules keepLastHoldOnly() {
            keepManyHolds = false;
            return this;
        }

        /** A keep does not tell a holder a force-release removed (renewals do): where the model answers 2, it answers 0. */
        public Rules noForcedNoteOnKeep() {
            forcedNotes = false;
            return this;
        }

        /** The leases (and keeps) to use. */
        public Rules leases(long... leases) {
            this.leases = leases.clone();
            return this;
        }
    }

    private final Backend backend;
    private final Rules rules;
    private final Random random;
    private final long seed;
    private final MemoryStore store = new MemoryStore(TimeUnit.MINUTES.toMillis(10));
    private final MemoryStore.Connection model = store.immediate();
    private final List<String> fields = new ArrayList<>();
    private final List<Lock> locks = new ArrayList<>();
    private final ArrayDeque<String> log = new ArrayDeque<>();
    /** What the model published during the step. */
    private final List<String> published = new ArrayList<>();
    private final Map<String, Tokens> tokens = new HashMap<>();
    private long nextTicket = 2;
    private int step;
    /** Operations run, on each side. */
    private int operations;

    /** One lock of the sequence: its name and type, and both sides' drivers. */
    private record Lock(String name, Type type, LockDriver model, LockDriver real) {}

    /** Tokens compared by order: each model token's back-end token, and the greatest seen. */
    private static final class Tokens {
        final Map<Long, Long> seen = new HashMap<>();
        long greatest = Long.MIN_VALUE;
    }

    private Differential(Backend backend, Rules rules, long seed, String prefix) {
        this.backend = backend;
        this.rules = rules;
        this.seed = seed;
        this.random = new Random(seed);
        store.subscribe((channel, message) -> published.add(channel + " " + message));
        for (int client = 0; client < 2; client++) {
            String clientId = new UUID(random.nextLong(), random.nextLong()).toString();
            for (long owner : OWNERS) {
                fields.add(clientId + ":" + owner);
            }
        }
        for (Type type : Type.values()) {
            for (int i = 0; i < 2; i++) {
                String name = prefix + ":" + seed + ":" + type.name().toLowerCase() + ":" + i;
                String channel = backend.channel(name);
                LockDriver driver = switch (type) {
                    case REENTRANT -> model.reentrant(name, channel);
                    case FENCED -> model.fenced(name, channel);
                    case SIMPLE -> model.simple(name, channel);
                };
                locks.add(new Lock(name, type, driver, backend.driver(type, name)));
            }
        }
    }

    /**
     * Runs one sequence of {@code steps} operations from {@code seed} on names starting with
     * {@code prefix}; returns how many operations ran on each side.
     *
     * @throws AssertionError at the first step where the back end and the model part
     */
    public static int run(Backend backend, Rules rules, long seed, String prefix, int steps) {
        Differential differential = new Differential(backend, rules, seed, prefix);
        for (differential.step = 0; differential.step < steps; differential.step++) {
            differential.step();
        }
        return differential.operations;
    }

    // ---- one step ---------------------------------------------------------------------------

    private void step() {
        Lock lock = locks.get(random.nextInt(locks.size()));
        String field = pick(lock);
        int count = store.holdCount(lock.name(), field);
        List<Lock> touched = new ArrayList<>(List.of(lock));
        int roll = random.nextInt(100);
        boolean turns = rules.turns && lock.type() == Type.REENTRANT;
        if (roll < 30) {
            // Another owner than the holder half of the time, so that waiters queue.
            acquire(lock, random.nextBoolean() ? field : fields.get(random.nextInt(fields.size())));
        } else if (roll < 48) {
            release(lock, field, count);
        } else if (roll < 55) {
            rollback(lock, field, count);
        } else if (roll < 60) {
            compare(lock, "holdCount " + field, driver -> driver.holdCount(field), Objects::equals);
        } else if (roll < 65) {
            compare(lock, "isLocked", LockDriver::isLocked, Objects::equals);
        } else if (roll < 70 && lock.type() == Type.FENCED) {
            compare(lock, "token", driver -> ((TokenDriver) driver).token(),
                    (modelToken, realToken) -> sameToken(lock, modelToken, realToken));
        } else if (roll < 73) {
            compare(lock, "forceRelease", LockDriver::forceRelease, Objects::equals);
        } else if (roll < 81) {
            touched.addAll(renew(lock));
        } else if (roll < 88 || !turns) {
            keep(lock, field, count);
        } else {
            turns(lock, field);
        }
        for (Lock one : touched) {
            claimGrant(one);
            compareState(one);
        }
        List<String> announced = backend.published();
        if (announced != null) {
            check("published", announced.equals(published), List.copyOf(published), announced);
        }
        published.clear();
    }

    /** An owner field: the holder's more often than not, so that holders act. */
    private String pick(Lock lock) {
        Map<String, Integer> holders = store.holders(lock.name());
        if (!holders.isEmpty() && random.nextInt(3) > 0) {
            return holders.keySet().iterator().next();
        }
        return fields.get(random.nextInt(fields.size()));
    }

    private long lease() {
        return rules.leases[random.nextInt(rules.leases.length)];
    }

    private void acquire(Lock lock, String field) {
        int count = store.holdCount(lock.name(), field);
        long lease = lease();
        // Mostly as the client knows its holds; sometimes a hold it forgot, taken over by a sole caller.
        int holdsBefore = random.nextInt(5) == 0 ? 0 : count;
        boolean sole = random.nextInt(3) == 0;
        boolean repeat = rules.repeats && random.nextInt(8) == 0;
        if (repeat) {
            holdsBefore = Math.max(0, count - random.nextInt(2));
        }
        long ticket = 0;
        long queued = 0;
        if (rules.turns && lock.type() == Type.REENTRANT && random.nextBoolean()) {
            ticket = nextTicket++;
            queued = queuedTicket(lock, field);
        }
        Request request = new Request(field, lease, holdsBefore, backend.budget(), repeat, ticket, queued, sole);
        compare(lock, "acquire " + describe(request), driver -> driver.acquire(request),
                (modelAttempt, realAttempt) -> sameAttempt(lock, modelAttempt, realAttempt));
    }

    private void release(Lock lock, String field, int count) {
        // Mostly the count the client knows; sometimes another (a count Redis has above it, or below).
        int holdsBefore = random.nextInt(4) == 0 ? 1 + random.nextInt(3) : Math.max(count, 1);
        boolean repeat = rules.repeats && random.nextInt(8) == 0;
        Request request = new Request(field, lease(), holdsBefore, backend.budget(), repeat, 0, 0, false);
        compare(lock, "release " + describe(request), driver -> driver.release(request), Objects::equals);
    }

    private void rollback(Lock lock, String field, int count) {
        int countBefore;
        if (lock.type() == Type.SIMPLE) {
            countBefore = 0; // never reentrant: the engine only undoes a first hold
        } else if (random.nextInt(4) == 0) {
            countBefore = random.nextInt(4);
        } else {
            // The count before an acquire that took effect, or one that did not.
            countBefore = Math.max(0, count - random.nextInt(2));
        }
        compare(lock, "rollback " + field + " countBefore=" + countBefore, driver -> driver.rollback(field, countBefore),
                Objects::equals);
    }

    private void keep(Lock lock, String field, int count) {
        if (!rules.keepManyHolds && count > 1) {
            release(lock, field, count);
            return;
        }
        long keepMillis = lease();
        compare(lock, "keep " + field + " " + keepMillis, driver -> driver.keep(field, keepMillis),
                (modelKept, realKept) -> Objects.equals(forcedAsGone(modelKept), realKept));
    }

    /** Renews one or two holds of the lock's layout in one call; returns the other lock renewed. */
    private List<Lock> renew(Lock lock) {
        List<Lock> batch = new ArrayList<>(List.of(lock));
        Lock second = locks.get(random.nextInt(locks.size()));
        if (second != lock && (second.type() == Type.SIMPLE) == (lock.type() == Type.SIMPLE)) {
            batch.add(second);
        }
        String[] keys = batch.stream().map(Lock::name).toArray(String[]::new);
        String[] args = new String[keys.length + 1];
        args[0] = Long.toString(lease());
        for (int i = 0; i < batch.size(); i++) {
            args[i + 1] = pick(batch.get(i));
        }
        compare("renew " + Arrays.toString(keys) + " " + Arrays.toString(args),
                () -> model.renewals().renew(lock.model().renewal(), keys, args),
                () -> backend.renewals().renew(lock.real().renewal(), keys, args),
                Objects::equals);
        return batch.subList(1, batch.size());
    }

    /** A ticket queued and left, or a hand-over to another owner of the lock's queue or of none. */
    private void turns(Lock lock, String field) {
        if (random.nextBoolean()) {
            long ticket = random.nextInt(4) == 0 ? nextTicket++ : queuedTicket(lock, field);
            compare(lock, "abandon " + field + " " + ticket, driver -> driver.abandon(field, ticket), Objects::equals);
            return;
        }
        String to = fields.get(random.nextInt(fields.size()));
        long toTicket = queuedTicket(lock, to);
        long lease = lease();
        boolean countOthers = random.nextBoolean();
        compare(lock, "handOver " + field + " -> " + to + " ticket " + toTicket,
                driver -> driver.handOver(field, to, lease, toTicket, countOthers, backend.budget()), Objects::equals);
    }

    /**
     * A lock granted to a ticket is claimed at once by its waiter, or, now and then, left by it (a
     * waiter that gave up as the grant came, whose leave passes the grant on): the grant's lease is short.
     */
    private void claimGrant(Lock lock) {
        for (int round = 0; round < fields.size(); round++) {
            String granted = store.granted(lock.name());
            if (granted == null) {
                return;
            }
            String waiter = store.holders(lock.name()).keySet().iterator().next();
            long ticket = Long.parseLong(granted);
            if (random.nextInt(4) == 0) {
                compare(lock, "abandon granted " + waiter + " " + ticket, driver -> driver.abandon(waiter, ticket),
                        Objects::equals);
            } else {
                Request claim = new Request(waiter, lease(), 0, backend.budget(), false, 0, ticket, false);
                compare(lock, "claim " + describe(claim), driver -> driver.acquire(claim),
                        (modelAttempt, realAttempt) -> sameAttempt(lock, modelAttempt, realAttempt));
            }
        }
    }

    /** The ticket {@code field} has in the lock's queue (its latest), or 0. */
    private long queuedTicket(Lock lock, String field) {
        long ticket = 0;
        for (String member : store.queue(lock.name())) {
            if (member.startsWith(field + ":")) {
                ticket = Long.parseLong(member.substring(field.length() + 1));
            }
        }
        return ticket;
    }

    // ---- comparing ----------------------------------------------------------------------------

    /** A comparison of two replies: whether the back end's agrees with the model's. */
    private interface Agreement<T> {
        boolean agree(T model, T real);
    }

    /** Runs one call on both sides' drivers of {@code lock} and compares the replies. */
    private <T> void compare(Lock lock, String what, Function<LockDriver, CompletableFuture<T>> call,
            Agreement<T> agreement) {
        compare(lock.name() + " " + what, () -> call.apply(lock.model()), () -> call.apply(lock.real()), agreement);
    }

    /** Runs a call on each side and compares the replies, a failure by its exception's class. */
    private <T> void compare(String what, Call<T> onModel, Call<T> onBackend, Agreement<T> agreement) {
        Object modelReply = outcome(onModel);
        Object realReply = outcome(onBackend);
        boolean agree;
        if (modelReply instanceof Failure || realReply instanceof Failure) {
            agree = Objects.equals(modelReply, realReply);
        } else {
            @SuppressWarnings("unchecked")
            T modelValue = (T) modelReply;
            @SuppressWarnings("unchecked")
            T realValue = (T) realReply;
            agree = agreement.agree(modelValue, realValue);
        }
        check(what, agree, modelReply, realReply);
    }

    /** A call that failed, by its exception's class: the messages differ between back ends. */
    private record Failure(String type) {}

    private void check(String what, boolean agree, Object modelReply, Object realReply) {
        operations++;
        String line = "step " + step + ": " + what + " -> model " + text(modelReply) + ", back end " + text(realReply);
        log.addLast(line);
        if (log.size() > LOG_LINES) {
            log.removeFirst();
        }
        if (!agree) {
            throw new AssertionError("the back end and the model disagree (seed " + seed + ", step " + step + "):\n  "
                    + String.join("\n  ", log));
        }
    }

    private boolean sameAttempt(Lock lock, Attempt modelAttempt, Attempt realAttempt) {
        if (modelAttempt.acquired() != realAttempt.acquired()) {
            return false;
        }
        if (!modelAttempt.acquired()) {
            return sameTtl(modelAttempt.ttlMillis(), realAttempt.ttlMillis());
        }
        if (lock.type() == Type.FENCED) {
            return sameToken(lock, modelAttempt.token(), realAttempt.token());
        }
        return rules.tokensOnEveryType || modelAttempt.token() == realAttempt.token();
    }

    /** A lease left: the same state (free, no expiry), else the back end's at most the slack shorter. */
    private static boolean sameTtl(long model, long real) {
        if (model < 0 || real < 0) {
            return model == real;
        }
        return real <= model + 1 && real >= model - TTL_SLACK_MILLIS;
    }

    private boolean sameToken(Lock lock, Long model, Long real) {
        if (model == null || real == null) {
            return model == real;
        }
        if (rules.tokenValues) {
            return model.equals(real);
        }
        Tokens seen = tokens.computeIfAbsent(lock.name(), name -> new Tokens());
        Long known = seen.seen.get(model);
        if (known != null) {
            return known.equals(real);
        }
        if (real <= seen.greatest) {
            return false;
        }
        seen.seen.put(model, real);
        seen.greatest = real;
        return true;
    }

    /** The model's 2 (a force-release removed the holder lately) as a back end that tells it only on renewal answers. */
    private Object forcedAsGone(Object reply) {
        return !rules.forcedNotes && Long.valueOf(2).equals(reply) ? Long.valueOf(0) : reply;
    }

    private void compareState(Lock lock) {
        State modelState = modelState(lock);
        State realState = backend.state(lock.type(), lock.name());
        boolean agree = modelState.holders().equals(realState.holders())
                && sameTtl(modelState.ttlMillis(), realState.ttlMillis())
                && (!rules.tokenValues || Objects.equals(modelState.token(), realState.token()))
                && (realState.bookkeeping() == null || realState.bookkeeping().equals(modelState.bookkeeping()));
        check(lock.name() + " state", agree, modelState, realState);
    }

    private State modelState(Lock lock) {
        String name = lock.name();
        List<String> bookkeeping = bookkeeping(store.granted(name), store.queuedNote(name), store.queue(name),
                store.forcedNote(name));
        return new State(store.holders(name), store.ttl(name), lock.type() == Type.FENCED ? store.tokenCounter(name)
                : null, bookkeeping);
    }

    /** The bookkeeping of a lock as both sides report it: grant, queue note, queue, force-release note (sorted). */
    public static List<String> bookkeeping(String granted, boolean queuedNote, List<String> queue, List<String> forced) {
        return List.of("granted=" + granted, "queued=" + queuedNote, "queue=" + queue,
                "forced=" + forced.stream().sorted().toList());
    }

    // ---- replies ------------------------------------------------------------------------------

    private interface Call<T> {
        CompletableFuture<T> run();
    }

    /** The call's reply, or its failure; a call that does not answer in 30 s fails the run. */
    private static Object outcome(Call<?> call) {
        try {
            return call.run().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return failure(e.getCause());
        } catch (RuntimeException e) {
            return failure(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (TimeoutException e) {
            throw new AssertionError("no reply in 30 s", e);
        }
    }

    private static Failure failure(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return new Failure(cause.getClass().getSimpleName());
    }

    private static String text(Object reply) {
        return reply instanceof Attempt attempt ? (attempt.acquired() ? "acquired token " + attempt.token()
                : "busy ttl " + attempt.ttlMillis()) : String.valueOf(reply);
    }

    private static String describe(Request request) {
        return request.field() + " lease " + request.leaseMillis() + " holdsBefore " + request.holdsBefore()
                + (request.sole() ? " sole" : "") + (request.repeat() ? " repeat" : "")
                + (request.ticket() != 0 ? " ticket " + request.ticket() : "")
                + (request.queuedTicket() != 0 ? " queued " + request.queuedTicket() : "");
    }
}
