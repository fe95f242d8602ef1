package io.relock.demo;

import io.relock.testkit.ChildJvm;
import java.time.Duration;

/**
 * A holder paused past its lease writes late, and the database refuses the write by its fencing
 * token. The holder is another JVM ({@link FencedWriterMain}): it takes the order's fenced lock
 * with a short watchdog lease, reads the order as NEW, and is frozen with SIGSTOP, as in a long
 * GC pause. Its lease runs out; a service instance of this JVM takes the lock
 * ({@code @WithLock(type = FENCED)}, a larger token), credits the order and writes it with its
 * token. Then the child is resumed and sends its late
 * {@code UPDATE … SET status = 'PAID', fence_token = ? WHERE id = ? AND fence_token < ?}: 0 rows.
 */
final class FencedRecharge implements Scenario {

    static final String TITLE = "A paused holder's late write, refused by the database's fencing token";

    private static final String ORDER_ID = "fenced-1";
    private static final String ACCOUNT_ID = "account-fenced-1";
    /** The child's lease: short, so that the pause outlives it within a second or so. */
    private static final Duration CHILD_WATCHDOG = Duration.ofSeconds(1);
    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    private final DemoRedis redis;
    private final RechargeDatabase database;

    FencedRecharge(DemoRedis redis, RechargeDatabase database) {
        this.redis = redis;
        this.database = database;
    }

    @Override
    public String title() {
        return TITLE;
    }

    @Override
    public String whatItShows() {
        return "a process frozen past its lease still believes it holds the lock; its write carries an old token"
                + " and updates 0 rows.";
    }

    @Override
    public void run(Report.Section section) throws Exception {
        database.openOrder(ORDER_ID, ACCOUNT_ID);
        String lockName = "recharge-fenced:" + ORDER_ID;
        RechargeDatabase.Tables tables = database.tables();
        try (ServiceInstances instances = ServiceInstances.start(1, redis, database);
                ChildJvm child = ChildJvm.start(FencedWriterMain.class, redis.keyPrefix(), lockName,
                        Long.toString(CHILD_WATCHDOG.toMillis()), database.remoteJdbcUrl(),
                        database.user() == null ? "" : database.user(), tables.orders(), tables.account(), ORDER_ID,
                        Long.toString(RechargeRace.AMOUNT))) {
            child.send(redis.uri());
            child.send(database.password() == null ? "" : database.password());
            String[] ready = child.awaitLine("READY", PROMPTLY).split(" ");
            long childToken = Long.parseLong(ready[1]);
            section.figure("child JVM (pid " + child.pid() + ")", "holds " + lockName + " with token " + childToken
                    + " (lease " + Report.human(CHILD_WATCHDOG) + ", watchdog-renewed), read the order: " + ready[2]);

            child.pause();
            long pausedAt = System.nanoTime();
            RechargeService.FencedOutcome parent;
            try {
                section.note("child paused with SIGSTOP: its watchdog cannot renew the lease");
                // Waits (up to @WithLock's 10 s) until the child's lease has run out.
                parent = instances.service(0).rechargeFenced(ORDER_ID, RechargeRace.AMOUNT);
                section.figure("this JVM, @WithLock(FENCED)", "token " + parent.token() + ", once the child's lease"
                        + " had run out; " + describe(parent.outcome()) + " (returned " + Report.human(
                        Duration.ofNanos(System.nanoTime() - pausedAt)) + " after the pause)");
            } finally {
                child.resume();
            }
            child.send("write");
            int rows = Integer.parseInt(child.awaitLine("WRITE", PROMPTLY).substring("WRITE ".length()));
            String unlock = child.awaitLine("UNLOCK", PROMPTLY);
            section.note("child resumed; it still believes it holds the lock and writes with token " + childToken);
            section.figure("child's late write", "UPDATE " + tables.orders() + " SET status = 'PAID', fence_token = "
                    + childToken + " WHERE id = '" + ORDER_ID + "' AND fence_token < " + childToken);
            section.figure("  rows updated", rows + (rows == 0 ? ": rejected, the order carries token "
                    + database.fenceToken(ORDER_ID) + "; the child rolled back its credit" : ""));
            section.figure("child's unlock()", unlock.startsWith("UNLOCK ok") ? "succeeded"
                    : "failed: " + unlock.substring("UNLOCK failed ".length()));
            child.awaitExit(PROMPTLY);

            long balance = database.balance(ACCOUNT_ID);
            section.figure("balance afterwards", balance + " (should be " + RechargeRace.AMOUNT + ")");
            boolean passed = parent.outcome() == RechargeService.Outcome.CREDITED && parent.token() > childToken
                    && rows == 0 && balance == RechargeRace.AMOUNT;
            section.verdict(passed,
                    "the late write with token " + childToken + " was rejected (0 rows) after token " + parent.token()
                            + " wrote; credited once",
                    "parent " + parent.outcome() + " with token " + parent.token() + ", child token " + childToken
                            + ", child's write updated " + rows + " rows, balance " + balance);
        }
    }

    private static String describe(RechargeService.Outcome outcome) {
        return switch (outcome) {
            case CREDITED -> "credited the order and wrote it with its token";
            case ALREADY_PAID -> "found the order already paid";
            case FENCED_OFF -> "its write was fenced off";
        };
    }
}
