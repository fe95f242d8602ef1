package io.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Owner transfer of the reentrant lock: the release that ends the last hold makes a queued waiter
 * of another client the owner and publishes its ticket; that waiter's {@code lock()} returns
 * without another acquire. Each test names the history it checks.
 */
class HandoffTest extends SingleServerTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static final Duration PROMPTLY = LockContractTest.PROMPTLY;

    private static String queue(String name) {
        return "{" + name + "}:handoff";
    }

    private long queued(String name) {
        return (Long) server.command("ZCARD", queue(name));
    }

    /** Calls of {@code command} since the last CONFIG RESETSTAT, inside scripts too. */
    private long calls(String command) {
        String prefix = "cmdstat_" + command + ":";
        return server.info("commandstats").lines().filter(line -> line.startsWith(prefix))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
    }

    /** Commands since the last CONFIG RESETSTAT, the test's own INFO and CONFIG left out. */
    private long allCalls() {
        return server.info("commandstats").lines().filter(line -> line.startsWith("cmdstat_"))
                .filter(line -> !line.startsWith("cmdstat_info:") && !line.startsWith("cmdstat_config"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
    }

    private long expiresAtMillis(String key) {
        return System.currentTimeMillis() + (Long) server.command("PTTL", key);
    }

    /**
     * History: lock, unlock, nobody else around. Redis runs 2 scripts and 8 commands: the acquire's
     * EXISTS, HINCRBY and PEXPIRE, the release's HMGET, DEL and PUBLISH (no HINCRBY: the key goes).
     */
    @Test
    void anUncontendedCycleCostsTwoScriptsAndEightCommands() {
        DistributedLock lock = clients.create().getLock("alone");
        lock.lock();
        lock.unlock();
        server.command("CONFIG", "RESETSTAT");
        lock.lock();
        lock.unlock();
        assertThat(calls("evalsha")).isEqualTo(2);
        assertThat(calls("hincrby")).isEqualTo(1);
        assertThat(allCalls()).as(server.info("commandstats")).isEqualTo(8);
    }

    /**
     * History: lock, unlock, nobody else around. Redis parses every argument and copies it into
     * the script's KEYS or ARGV table, about 1 600 instructions each: the acquire sends its
     * three keys with the lease and the owner only (a thread blocked in lock() may take over a
     * hold its client forgot, flag '0'; its tickets and hold count are '0' too, and no repeat
     * flag goes with a first run), the release its four keys with the owner only (the release
     * of a last hold keeps no lease, the count after it is '0', and so is the unlock message).
     * The field goes last, so that a '0' left in the middle would show as the wrong last word.
     */
    @Test
    void anUncontendedCycleSendsOnlyTheArgumentsThatAreNotZero() {
        DistributedLock lock = clients.create().getLock("terse");
        lock.lock();
        lock.unlock();
        server.command("CONFIG", "SET", "slowlog-log-slower-than", "0");
        try {
            server.command("SLOWLOG", "RESET");
            lock.lock();
            lock.unlock();
            List<List<String>> scripts = new ArrayList<>();
            for (Object entry : (List<?>) server.command("SLOWLOG", "GET", "-1")) {
                List<String> words = ((List<?>) ((List<?>) entry).get(3)).stream().map(String::valueOf).toList();
                if (words.get(0).equalsIgnoreCase("evalsha")) {
                    scripts.add(0, words); // SLOWLOG GET lists the newest first
                }
            }
            assertThat(scripts).hasSize(2);
            // EVALSHA sha numkeys, then the keys, then the arguments.
            String field = scripts.get(1).get(scripts.get(1).size() - 1);
            assertThat(field).as("the owner field").contains(":");
            assertThat(scripts.get(0)).as("the acquire").hasSize(3 + 3 + 2).endsWith("30000", field);
            assertThat(scripts.get(0).subList(3, 6)).containsExactly("terse", queue("terse"), "{terse}:yield");
            assertThat(scripts.get(1)).as("the release").hasSize(3 + 4 + 1);
        } finally {
            server.command("CONFIG", "SET", "slowlog-log-slower-than", "10000");
        }
    }

    /**
     * History: A holds; B (another client) queues; A unlocks. The release makes B the owner and
     * wakes B alone; B's lock() returns, and one script call claims the hold with B's own lease
     * (no second hold taken: no HINCRBY at all, since the release does not count its last hold
     * down either). Nobody else retried. Redis runs 14 commands for it: the release's EVALSHA,
     * HMGET, TIME, PUBSUB NUMSUB, ZRANGE (the first two tickets), ZREM, DEL, HSET, PEXPIRE and
     * PUBLISH; the claim's EVALSHA, HMGET, HDEL and PEXPIRE (18 before the queue's bookkeeping
     * was cut: ZREMRANGEBYSCORE, ZCARD, the claim's EXISTS and HEXISTS + HGET for its HMGET). The
     * waiter's subscription lingers while its client holds the lock: no UNSUBSCRIBE.
     */
    @Test
    void aReleaseHandsTheLockToAWaiterOnAnotherClientWhichClaimsItInOneCall() throws Exception {
        DistributedLock holder = clients.create().getLock("handed");
        Relock other = clients.create();
        DistributedLock waiter = other.getLock("handed");
        holder.lock();
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> waiting = Threads.run(() -> {
            waiter.lock();
            try {
                release.await();
            } finally {
                waiter.unlock();
            }
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter queued", () -> queued("handed") == 1);
        server.command("CONFIG", "RESETSTAT");
        holder.unlock();
        Eventually.await(PROMPTLY, "the waiter holds the lock", () -> !other.heldLocks().isEmpty());
        // Its claim is sent as its lock() returns, not before: counted once it took the hold.
        Eventually.await(PROMPTLY, "the claim ran", () -> (Long) server.command("PTTL", "handed") > 5000);
        assertThat(calls("evalsha")).as("the release and the claim").isEqualTo(2);
        assertThat(calls("hincrby")).isZero();
        assertThat(calls("unsubscribe")).as("the waiter's subscription lingers").isZero();
        // Left out: the test's own PTTL.
        assertThat(allCalls() - calls("pttl")).as(server.info("commandstats")).isEqualTo(14);
        assertThat(other.getLockInfo("handed").holders().keySet()).singleElement().asString()
                .startsWith(other.clientId() + ":");
        assertThat(queued("handed")).isZero();
        release.countDown();
        waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(server.command("EXISTS", "handed", queue("handed"))).isEqualTo(0L);
    }

    /**
     * History: A holds; B (another client) queues and is granted the lock; A queues; B unlocks,
     * granting the lock to A, and asks again at once. B's subscription to the unlock channel
     * lingered since its win, so its first attempt queues its ticket: no SUBSCRIBE, no attempt
     * without a ticket before it, and A's claim leaves A's subscription standing (no
     * UNSUBSCRIBE). Redis runs 22 commands from B's unlock until B is queued: the release's 10,
     * A's claim's 4 and B's attempt's EVALSHA, HMGET, PTTL, TIME, ZRANGE, ZADD, PEXPIRE and HSET
     * (28 when each win gave its subscription back: B's attempt without a ticket, EVALSHA,
     * EXISTS, HMGET and PTTL, its SUBSCRIBE and A's UNSUBSCRIBE). Then A's unlock grants it back
     * to B, and the lock ends free.
     */
    @Test
    void aClientThatWonAContendedLockQueuesInItsFirstAttemptWhenItAsksAgain() throws Exception {
        DistributedLock a = clients.create().getLock("again");
        DistributedLock b = clients.create().getLock("again");
        a.lock();
        CompletableFuture<Void> bWon = new CompletableFuture<>();
        CountDownLatch bGoesOn = new CountDownLatch(1);
        CompletableFuture<Void> bDone = Threads.run(() -> {
            b.lock();
            bWon.complete(null);
            bGoesOn.await();
            b.unlock();
            b.lock();
            b.unlock();
            return null;
        });
        Eventually.await(PROMPTLY, "B queued", () -> queuedCount("again") == 1);
        a.unlock();
        bWon.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<Void> aHolds = new CompletableFuture<>();
        CountDownLatch aReleases = new CountDownLatch(1);
        CompletableFuture<Void> aDone = Threads.run(() -> {
            a.lock();
            aHolds.complete(null);
            try {
                aReleases.await();
            } finally {
                a.unlock();
            }
            return null;
        });
        Eventually.await(PROMPTLY, "A queued", () -> queuedCount("again") == 1);
        server.command("CONFIG", "RESETSTAT");
        bGoesOn.countDown();
        aHolds.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        Eventually.await(PROMPTLY, "B queued again and A's claim ran",
                () -> queuedCount("again") == 1 && leaseEndsLaterThan("again", 5000));
        assertThat(calls("subscribe") + calls("unsubscribe")).as(server.info("commandstats")).isZero();
        assertThat(calls("evalsha")).as("B's release, A's claim and B's one attempt").isEqualTo(3);
        // Left out: the test's own ZCOUNT and PEXPIRETIME, which no script runs.
        assertThat(allCalls() - calls("zcount") - calls("pexpiretime")).as(server.info("commandstats"))
                .isEqualTo(22);
        aReleases.countDown();
        aDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        bDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(server.command("EXISTS", "again", queue("again"))).isEqualTo(0L);
    }

    /** Entries in the queue of {@code name}, by a command no script runs (so that counts can leave it out). */
    private long queuedCount(String name) {
        return (Long) server.command("ZCOUNT", queue(name), "-inf", "+inf");
    }

    /** Whether the lock's lease ends more than {@code millis} from now, by a command no script runs. */
    private boolean leaseEndsLaterThan(String name, long millis) {
        return (Long) server.command("PEXPIRETIME", name) > System.currentTimeMillis() + millis;
    }

    /**
     * History: 3 clients × 3 threads take one lock 15 times each, handing it over among them.
     * A flag set inside the critical section never finds another holder there, every section
     * ran, and at the end neither the lock nor its queue is left.
     */
    @Test
    void clientsTakingTurnsNeverHoldTogether() throws Exception {
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            Relock relock = clients.create();
            for (int t = 0; t < 3; t++) {
                locks.add(relock.getLock("churn"));
            }
        }
        int rounds = 15;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger sections = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        AtomicLong longestWaitNanos = new AtomicLong();
        for (DistributedLock lock : locks) {
            workers.add(Threads.run(() -> {
                gate.await();
                for (int i = 0; i < rounds; i++) {
                    long asked = System.nanoTime();
                    lock.lock();
                    longestWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        sections.incrementAndGet();
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        long started = System.nanoTime();
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        System.out.printf("churn: %d sections in %d ms, longest wait %d ms%n", sections.get(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                TimeUnit.NANOSECONDS.toMillis(longestWaitNanos.get()));
        assertThat(overlaps).hasValue(0);
        assertThat(sections).hasValue(locks.size() * rounds);
        assertThat(server.command("EXISTS", "churn", queue("churn"))).isEqualTo(0L);
    }

    /**
     * History: 2 clients × 3 threads take one lock 10 times each while a sampler reads the queue
     * over and over. No sample holds two entries of one client (its threads wait locally behind
     * the one that is queued), entries were seen at all, and no two threads ever held together.
     */
    @Test
    void threadsOfOneClientShareOneQueueEntry() throws Exception {
        List<Relock> relocks = List.of(clients.create(), clients.create());
        List<DistributedLock> locks = new ArrayList<>();
        for (Relock relock : relocks) {
            for (int t = 0; t < 3; t++) {
                locks.add(relock.getLock("one-entry"));
            }
        }
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (DistributedLock lock : locks) {
            workers.add(Threads.run(() -> {
                gate.await();
                for (int i = 0; i < 10; i++) {
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new));
        AtomicInteger mostOfOneClient = new AtomicInteger();
        AtomicInteger samplesWithEntries = new AtomicInteger();
        CompletableFuture<Void> sampler = Threads.run(() -> {
            while (!all.isDone()) {
                @SuppressWarnings("unchecked")
                List<Object> members = (List<Object>) server.command("ZRANGE", queue("one-entry"), "0", "-1");
                if (!members.isEmpty()) {
                    samplesWithEntries.incrementAndGet();
                }
                for (Relock relock : relocks) {
                    int mine = (int) members.stream().filter(m -> ((String) m).startsWith(relock.clientId())).count();
                    mostOfOneClient.accumulateAndGet(mine, Math::max);
                }
                Thread.sleep(1); // a sampling interval, not a synchronisation
            }
            return null;
        });
        gate.countDown();
        all.get(60, TimeUnit.SECONDS);
        sampler.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(overlaps).hasValue(0);
        assertThat(samplesWithEntries.get()).isPositive();
        assertThat(mostOfOneClient).hasValue(1);
        assertThat(server.command("EXISTS", "one-entry", queue("one-entry"))).isEqualTo(0L);
    }

    /**
     * History: one client's 4 threads take one lock 200 times in all, every critical section
     * checking that it is alone. No two threads ever held together, the lock ends free, and Redis
     * ran about one script per acquisition: each last release hands the hold to the next thread
     * of the client in one script, and a thread that asks while another thread of its client
     * holds waits without asking Redis. (Through Redis, an acquisition cost a release, the woken
     * waiter's attempt and the releaser's own two attempts: about four scripts.)
     */
    @Test
    void threadsOfOneClientHandTheLockOnWithAboutOneScriptEach() throws Exception {
        server.command("CONFIG", "RESETSTAT");
        takeTurns("one-client", 1, 4, 200);
        long scripts = calls("evalsha");
        System.out.printf("one client, 4 threads: %d scripts for 200 acquisitions%n", scripts);
        assertThat(scripts).as("scripts for 200 acquisitions").isLessThanOrEqualTo(300);
    }

    /**
     * History: one client's 6 threads take one lock over and over, with nothing to do outside it,
     * until 360 sections ran. Every thread got at least a quarter of its fair share (60): a
     * release hands the lock to the waiter that asked first, the one holding the client's place
     * in the queue on Redis included (passed over, it got nothing at all: with no other client,
     * no hand-off through Redis ever reaches it). No two threads ever held together.
     */
    @Test
    void everyThreadOfAClientGetsItsTurnWhileTheLockIsHandedOn() throws Exception {
        int[] perThread = takeTurns("turns-one-client", 1, 6, 360);
        assertThat(Arrays.stream(perThread).min().orElseThrow()).as("fewest sections of a thread, of %s",
                Arrays.toString(perThread)).isGreaterThanOrEqualTo(15);
    }

    /**
     * History: as above, with 2 clients × 5 threads and 500 sections, so that the lock also goes
     * from client to client: each thread gets its quarter share, and Redis ran at most 1.4
     * scripts per acquisition (up to 16 hand-overs within a client, then the release through
     * Redis, the other client's claim and the yielding client queueing again: 1.17 measured;
     * moving a client's queue place at each hand-over within it cost 1.65).
     */
    @Test
    void everyThreadOfTwoClientsGetsItsTurnWhileTheLockIsHandedOn() throws Exception {
        server.command("CONFIG", "RESETSTAT");
        int[] perThread = takeTurns("turns-two-clients", 2, 5, 500);
        long scripts = calls("evalsha");
        System.out.printf("two clients, 5 threads each: %d scripts for 500 acquisitions%n", scripts);
        assertThat(Arrays.stream(perThread).min().orElseThrow()).as("fewest sections of a thread, of %s",
                Arrays.toString(perThread)).isGreaterThanOrEqualTo(500 / 10 / 4);
        assertThat(scripts).as("scripts for 500 acquisitions").isLessThanOrEqualTo(700);
    }

    /**
     * {@code clientCount} clients × {@code threadsPerClient} threads take lock {@code name} until
     * {@code total} sections ran; checks that no two ever held together and that the lock and its
     * queue are gone at the end. Returns how many sections each thread ran.
     */
    private int[] takeTurns(String name, int clientCount, int threadsPerClient, int total) throws Exception {
        List<DistributedLock> locks = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            Relock relock = clients.create();
            for (int t = 0; t < threadsPerClient; t++) {
                locks.add(relock.getLock(name));
            }
        }
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger sections = new AtomicInteger();
        int[] perThread = new int[locks.size()];
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < locks.size(); i++) {
            DistributedLock lock = locks.get(i);
            int me = i;
            workers.add(Threads.run(() -> {
                gate.await();
                while (sections.get() < total) {
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        if (sections.incrementAndGet() <= total) {
                            perThread[me]++;
                        }
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        gate.countDown();
        for (CompletableFuture<Void> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        System.out.printf("%s: sections per thread %s%n", name, Arrays.toString(perThread));
        assertThat(overlaps).hasValue(0);
        assertThat(Arrays.stream(perThread).sum()).isEqualTo(total);
        assertThat(server.command("EXISTS", name, queue(name))).isEqualTo(0L);
        return perThread;
    }

    /**
     * History: client A's 3 threads take one lock over and over, handing it among themselves, and
     * each looks at the queue on Redis while it holds the lock; client B asks for the lock once,
     * and queues. A holds the lock with B's entry on Redis at most twice
     * {@value io.relock.internal.engine.Turn#MAX_HAND_OVERS_IN_A_ROW} + 2 times before B gets it:
     * a run of 16 hand-overs in a row, plus the one whose reply first saw B queued and the one
     * under way then; and once more as much if A's own entry was queued before B's, so that A's
     * turn through Redis comes first (A's next entry queues behind B's). No two threads of
     * either client ever held together.
     */
    @Test
    void aClientHandsTheLockAmongItsThreadsOnlyABoundedNumberOfTimesWhileAnotherClientWaits() throws Exception {
        Relock a = clients.create();
        Relock b = clients.create();
        List<String> holders = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            DistributedLock lock = a.getLock("turns");
            workers.add(Threads.run(() -> {
                while (!stop.get()) {
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        @SuppressWarnings("unchecked")
                        List<Object> queued = (List<Object>) server.command("ZRANGE", queue("turns"), "0", "-1");
                        boolean bQueued = queued.stream().anyMatch(m -> ((String) m).startsWith(b.clientId()));
                        holders.add(bQueued ? "A, B queued" : "A");
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        try {
            Eventually.await(PROMPTLY, "A's threads took turns a while", () -> holders.size() >= 50);
            DistributedLock theirs = b.getLock("turns");
            CompletableFuture<Void> bDone = Threads.run(() -> {
                theirs.lock();
                try {
                    if (!inside.compareAndSet(false, true)) {
                        overlaps.incrementAndGet();
                    }
                    holders.add("B");
                    inside.set(false);
                } finally {
                    theirs.unlock();
                }
                return null;
            });
            bDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            // Also when B never got in: A's threads would go on filling the history for the rest of the run.
            stop.set(true);
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        }
        List<String> history = List.copyOf(holders);
        long whileBQueued = history.subList(0, history.indexOf("B")).stream().filter("A, B queued"::equals).count();
        System.out.printf("A held %d times while B was queued%n", whileBQueued);
        assertThat(whileBQueued).isLessThanOrEqualTo(2 * (io.relock.internal.engine.Turn.MAX_HAND_OVERS_IN_A_ROW + 2));
        assertThat(overlaps).hasValue(0);
        assertThat(server.command("EXISTS", "turns", queue("turns"))).isEqualTo(0L);
    }

    /**
     * History: A holds; B (another client) waits 300 ms and gives up; then A unlocks. B's entry is
     * gone when its tryLock answers false, and A's release grants nothing to it: the lock is free.
     */
    @Test
    void aWaiterThatTimesOutLeavesTheQueueAndIsGrantedNothing() throws Exception {
        DistributedLock holder = clients.create().getLock("gave-up");
        DistributedLock waiter = clients.create().getLock("gave-up");
        holder.lock();
        assertThat(Threads.call(() -> waiter.tryLock(300, TimeUnit.MILLISECONDS)).get()).isFalse();
        assertThat(server.command("EXISTS", queue("gave-up"))).isEqualTo(0L);
        holder.unlock();
        assertThat(server.command("EXISTS", "gave-up", queue("gave-up"))).isEqualTo(0L);
    }

    /**
     * History: A holds; B (another client) waits interruptibly, queues, and is interrupted; then A
     * unlocks. B throws InterruptedException with its entry gone, and the lock ends free.
     */
    @Test
    void anInterruptedWaiterLeavesTheQueueAndIsGrantedNothing() throws Exception {
        DistributedLock holder = clients.create().getLock("interrupted");
        DistributedLock waiter = clients.create().getLock("interrupted");
        holder.lock();
        AtomicReference<Thread> thread = new AtomicReference<>();
        CompletableFuture<Void> waiting = Threads.run(() -> {
            thread.set(Thread.currentThread());
            waiter.lockInterruptibly();
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter queued", () -> queued("interrupted") == 1);
        thread.get().interrupt();
        assertThatThrownBy(() -> waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InterruptedException.class);
        assertThat(server.command("EXISTS", queue("interrupted"))).isEqualTo(0L);
        holder.unlock();
        assertThat(server.command("EXISTS", "interrupted", queue("interrupted"))).isEqualTo(0L);
    }

    /**
     * History: A holds; B (another client) queues; B's client is closed; then A unlocks. B's
     * lock() fails with the client's close, its entry is gone, and A's release grants nothing to
     * the closed client: the lock is free.
     */
    @Test
    void aClosedClientsWaiterLeavesTheQueueAndIsGrantedNothing() throws Exception {
        DistributedLock holder = clients.create().getLock("closing");
        Relock other = clients.create();
        DistributedLock waiter = other.getLock("closing");
        holder.lock();
        CompletableFuture<Void> waiting = Threads.run(() -> {
            waiter.lock();
            return null;
        });
        Eventually.await(PROMPTLY, "the waiter queued", () -> queued("closing") == 1);
        other.close();
        assertThatThrownBy(() -> waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(server.command("EXISTS", queue("closing"))).isEqualTo(0L);
        holder.unlock();
        assertThat(server.command("EXISTS", "closing", queue("closing"))).isEqualTo(0L);
    }

    /**
     * History, 40 times: A holds; B waits a short time that ends about when A unlocks. Whatever
     * the interleaving of the grant with B's timeout, B either returns true and unlocks, or
     * returns false; once both are back, the lock is free (a grant to a waiter that gave up is
     * passed on, never left behind).
     */
    @Test
    void aGrantRacingTheWaitersTimeoutIsNeverLeftHeld() throws Exception {
        DistributedLock holder = clients.create().getLock("race");
        DistributedLock waiter = clients.create().getLock("race");
        int granted = 0;
        for (int i = 0; i < 40; i++) {
            holder.lock();
            // Waits about as long as queueing takes (a few round trips), so the timeout falls
            // before, during or after the hand-off depending on the round.
            long waitMillis = 1 + i % 8;
            CompletableFuture<Boolean> waiting = Threads.call(() -> {
                boolean acquired = waiter.tryLock(waitMillis, TimeUnit.MILLISECONDS);
                if (acquired) {
                    waiter.unlock();
                }
                return acquired;
            });
            Eventually.await(PROMPTLY, "the waiter queued or done", () -> queued("race") == 1 || waiting.isDone());
            holder.unlock();
            granted += waiting.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS) ? 1 : 0;
            assertThat(server.command("EXISTS", "race", queue("race"))).as("round %d", i).isEqualTo(0L);
        }
        System.out.printf("hand-off racing timeouts: %d of 40 waiters got the lock%n", granted);
    }

    /**
     * History: A holds with a 60 s lease; B (another client) queues; A re-enters with a 10 s
     * lease, so the lock's TTL is short when C (a third client) queues. C's entry goes stale
     * sooner than B's, yet it queues behind B (else a client queueing during short leases, such
     * as the hand-over lease, could pass the others at every turn): A's unlock hands the lock to
     * B, then B's to C.
     */
    @Test
    void aWaiterQueuedWhileTheLeaseIsShortQueuesBehindTheWaitersBeforeIt() throws Exception {
        DistributedLock holder = clients.create().getLock("in-order");
        holder.lock(60, TimeUnit.SECONDS);
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        Relock b = clients.create();
        Relock c = clients.create();
        CompletableFuture<Void> bDone = Threads.run(() -> takeAndNote(b.getLock("in-order"), "B", order));
        Eventually.await(PROMPTLY, "B queued", () -> queued("in-order") == 1);
        holder.lock(10, TimeUnit.SECONDS);
        CompletableFuture<Void> cDone = Threads.run(() -> takeAndNote(c.getLock("in-order"), "C", order));
        Eventually.await(PROMPTLY, "C queued", () -> queued("in-order") == 2);
        @SuppressWarnings("unchecked")
        List<Object> entries = (List<Object>) server.command("ZRANGE", queue("in-order"), "0", "-1");
        assertThat((String) entries.get(0)).as("first in the queue").startsWith(b.clientId());
        holder.unlock();
        holder.unlock();
        bDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        cDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).containsExactly("B", "C");
        assertThat(server.command("EXISTS", "in-order", queue("in-order"))).isEqualTo(0L);
    }

    private static Void takeAndNote(DistributedLock lock, String who, List<String> order) {
        lock.lock();
        try {
            order.add(who);
        } finally {
            lock.unlock();
        }
        return null;
    }

    /**
     * History: A holds with a 30 s lease; a child JVM queues and is SIGKILLed; A re-enters with a
     * 60 s lease, so that C (another client) queues behind the dead entry and parks for A's 60 s;
     * A unlocks. The lock goes to the dead waiter
     * for the 2 s hand-over lease, then to C: C waits about that long, not a lease. C was told
     * 60 s; it wakes on time because the ticket published for the dead waiter told its client
     * that the lock may be free when the hand-over lease runs out.
     */
    @Test
    void aWaiterKilledWhileNextInLineDelaysTheNextHolderByTheHandOverLease() throws Exception {
        DistributedLock holder = clients.create().getLock("dead-waiter");
        holder.lock(30, TimeUnit.SECONDS);
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "dead-waiter", "30000")) {
            Eventually.await(PROMPTLY, "the child queued", () -> queued("dead-waiter") == 1);
            child.kill();
            holder.lock(60, TimeUnit.SECONDS);
            Relock next = clients.create();
            DistributedLock nextLock = next.getLock("dead-waiter");
            CompletableFuture<Long> waited = Threads.call(() -> {
                nextLock.lock();
                long acquiredAt = System.nanoTime();
                nextLock.unlock();
                return acquiredAt;
            });
            Eventually.await(PROMPTLY, "C queued", () -> queued("dead-waiter") == 2);
            @SuppressWarnings("unchecked")
            List<Object> first = (List<Object>) server.command("ZRANGE", queue("dead-waiter"), "0", "0");
            assertThat((String) first.get(0)).doesNotStartWith(next.clientId());
            holder.unlock();
            long releasedAt = System.nanoTime();
            holder.unlock();
            long delayMillis = TimeUnit.NANOSECONDS.toMillis(waited.get(30, TimeUnit.SECONDS) - releasedAt);
            System.out.printf("a dead waiter next in line delayed the next holder by %d ms%n", delayMillis);
            assertThat(delayMillis).isBetween(1500L, 10_000L);
        }
    }

    /**
     * History: A holds; a child JVM queues and is paused (SIGSTOP); C (another client) queues
     * behind it; A unlocks, handing the lock to the paused child for the hand-over lease; the
     * lease runs out and C takes the lock; the child resumes (SIGCONT) while C holds and reads
     * the ticket meant for it. The child must not report the lock held while C holds it (no two
     * holders): its claim finds the hand-over gone and it waits again; it gets the lock once C
     * releases.
     */
    @Test
    void aWaiterPausedPastTheHandOverLeaseDoesNotTakeTheLockFromTheNextHolder() throws Exception {
        DistributedLock holder = clients.create().getLock("paused-waiter");
        holder.lock(30, TimeUnit.SECONDS);
        try (ChildJvm child = ChildJvm.start(LockHolderMain.class, server.uri(), "paused-waiter", "30000")) {
            Eventually.await(PROMPTLY, "the child queued", () -> queued("paused-waiter") == 1);
            child.pause();
            holder.lock(60, TimeUnit.SECONDS);
            Relock next = clients.create();
            DistributedLock nextLock = next.getLock("paused-waiter");
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> nextHolds = new CompletableFuture<>();
            CompletableFuture<Void> nextDone = Threads.run(() -> {
                nextLock.lock();
                nextHolds.complete(null);
                try {
                    release.await();
                } finally {
                    nextLock.unlock();
                }
                return null;
            });
            Eventually.await(PROMPTLY, "C queued", () -> queued("paused-waiter") == 2);
            holder.unlock();
            holder.unlock();
            nextHolds.get(30, TimeUnit.SECONDS);
            child.resume();
            Eventually.await(PROMPTLY, "the resumed child waits again",
                    () -> ((List<?>) server.command("ZRANGE", queue("paused-waiter"), "0", "-1")).size() == 1);
            assertThat(child.output()).as("the child does not hold while C does").doesNotContain("LOCKED");
            assertThat(next.getLockInfo("paused-waiter").holders().keySet()).singleElement().asString()
                    .startsWith(next.clientId() + ":");
            release.countDown();
            nextDone.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(child.awaitLine("LOCKED", PROMPTLY)).as("the child gets it once C releases").isNotNull();
            child.send("release");
            child.awaitLine("RELEASED", PROMPTLY);
        }
    }

    /**
     * History: this JVM and a child JVM lock and unlock one lock 300 times each, so the lock is
     * handed back and forth between the two processes. Neither side's unlock ever finds its hold
     * gone (an earlier design lost about one run in three this way: a stale entry granted a
     * second time), and at the end neither the lock nor its queue is left.
     */
    @Test
    void aHandOffLoopWithAWaiterInAnotherJvmNeverLosesAHold() throws Exception {
        int rounds = 300;
        try (ChildJvm child = ChildJvm.start(HandoffLoopMain.class, server.uri(), "ping-pong",
                Integer.toString(rounds))) {
            child.awaitLine("READY", LockContractTest.CHILD_START);
            DistributedLock lock = clients.create().getLock("ping-pong");
            child.send("go");
            for (int i = 0; i < rounds; i++) {
                lock.lock();
                lock.unlock();
            }
            child.awaitLine("DONE", Duration.ofSeconds(60));
            assertThat(child.awaitExit(PROMPTLY)).isZero();
        }
        assertThat(server.command("EXISTS", "ping-pong", queue("ping-pong"))).isEqualTo(0L);
    }

    /**
     * History: A and B (two Relock clients) hand the lock to each other without pause, so that
     * one of them always waits queued; R (Redisson) asks for it meanwhile. A release that would
     * hand the lock to the queued Relock client while R listens frees it for R instead (a yield),
     * and R gets it while A and B go on: before yields, R never did (issue: the queue never
     * emptied). A, B and R never hold it together.
     */
    @Test
    void aRedissonWaiterGetsTheLockWhileRelockClientsKeepHandingItOn() throws Exception {
        Config config = new Config();
        config.setLockWatchdogTimeout(30_000);
        config.useSingleServer().setAddress(server.uri()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
        RedissonClient redisson = Redisson.create(config);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger relockTurns = new AtomicInteger();
        try {
            List<CompletableFuture<Void>> relockThreads = new ArrayList<>();
            for (Relock client : List.of(clients.create(), clients.create())) {
                DistributedLock lock = client.getLock("mixed-queue");
                relockThreads.add(Threads.run(() -> {
                    for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                        lock.lock();
                        try {
                            if (!inside.compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                            relockTurns.incrementAndGet();
                            inside.set(false);
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
            Eventually.await(PROMPTLY, "a Relock client queued", () -> queued("mixed-queue") >= 1);
            Lock theirs = redisson.getLock("mixed-queue");
            int turnsBefore = relockTurns.get();
            boolean acquired = theirs.tryLock(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            if (acquired) {
                if (!inside.compareAndSet(false, true)) {
                    overlaps.incrementAndGet();
                }
                inside.set(false);
                theirs.unlock();
            }
            assertThat(acquired).as("Redisson's waiter got the lock").isTrue();
            Eventually.await(PROMPTLY, "the Relock clients went on", () -> relockTurns.get() > turnsBefore + 10);
            stop.set(true);
            for (CompletableFuture<Void> thread : relockThreads) {
                thread.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
            }
            assertThat(overlaps).hasValue(0);
        } finally {
            stop.set(true);
            redisson.shutdown();
        }
    }

    /**
     * History: A holds; B (another client, 3 s watchdog) gets the lock by hand-off, re-enters,
     * and keeps it while its watchdog renews it past the lease; B unlocks twice. The hold counts
     * 2 then 1, the lease is moved past the extended one by a renewal, no loss is reported, and
     * the lock ends free.
     */
    @Test
    void aHandedOverHoldIsReentrantAndRenewedByTheWatchdog() throws Exception {
        DistributedLock holder = clients.create().getLock("renewed");
        Relock other = clients.create(Duration.ofSeconds(3));
        AtomicInteger losses = new AtomicInteger();
        other.addLockListener(event -> losses.incrementAndGet());
        DistributedLock waiter = other.getLock("renewed");
        holder.lock();
        CountDownLatch renewed = new CountDownLatch(1);
        CompletableFuture<int[]> b = Threads.call(() -> {
            waiter.lock();
            waiter.lock();
            int reentered = waiter.getHoldCount();
            renewed.await();
            waiter.unlock();
            int afterOne = waiter.getHoldCount();
            waiter.unlock();
            return new int[] {reentered, afterOne};
        });
        Eventually.await(PROMPTLY, "B queued", () -> queued("renewed") == 1);
        holder.unlock();
        Eventually.await(PROMPTLY, "B holds, lease extended past the hand-over lease",
                () -> !other.heldLocks().isEmpty() && (Long) server.command("PTTL", "renewed") > 2500);
        long extended = expiresAtMillis("renewed");
        Eventually.await(PROMPTLY, "a watchdog renewal", () -> expiresAtMillis("renewed") > extended + 500);
        renewed.countDown();
        assertThat(b.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).containsExactly(2, 1);
        assertThat(losses).hasValue(0);
        assertThat(server.command("EXISTS", "renewed")).isEqualTo(0L);
    }
}
