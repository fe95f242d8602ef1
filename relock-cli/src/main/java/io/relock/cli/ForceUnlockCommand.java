package io.relock.cli;

import io.relock.DistributedReadWriteLock;
import io.relock.LockInfo;
import io.relock.Relock;
import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relock force-unlock NAME}: shows the lock, asks, and releases it whoever holds it,
 * through relock-core's {@code forceUnlock()} of the recognised type, so that waiters are told.
 * What counts as a lock is relock-core's rule ({@link io.relock.LockInfo.Kind}); a key that holds
 * anything else is never removed (exit code 6).
 */
@Command(name = "force-unlock", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Release a lock whoever holds it and wake its waiters (asks first).",
        description = {"Release a lock whoever holds it, as DistributedLock.forceUnlock() does: delete its key "
                + "and publish the unlock message, so that waiting clients (Relock and Redisson) try again at once.",
            "Shows what it will remove and asks for confirmation (y/N) unless --yes is given. The holders are not "
                + "told at once: a Relock holder's watchdog finds the lock force-unlocked at its next renewal, and "
                + "its unlock finds it gone. Use it for a lock whose holder is known to be dead or stuck.",
            "A key that holds no lock (a cache entry, a counter hash, a list...) is never removed: exit code 6."},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:the lock was removed",
            "1:an unexpected error (a bug; the stack trace is printed)",
            "2:bad usage",
            "3:nothing to remove: the lock is free (or was released meanwhile)",
            "4:not confirmed, nothing removed",
            "5:Redis trouble (unreachable, authentication, TLS, a failed command)",
            "6:the key holds something that is not a lock; nothing removed"})
public final class ForceUnlockCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name (without the key prefix)")
    private String name;

    @Option(names = {"-y", "--yes"}, description = "do not ask for confirmation")
    private boolean yes;

    @Mixin
    private ConnectionOptions connection;

    /** Creates the command; picocli sets its fields. */
    public ForceUnlockCommand() {}

    @Override
    public Integer call() {
        if (name.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "NAME must not be empty");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (Session session = Session.open(connection.config())) {
            LockReader reader = new LockReader(session);
            LockView view;
            try {
                view = reader.inspect(name);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "NAME: " + e.getMessage());
            }
            if (view.type() == LockInfo.Kind.NOT_A_LOCK) {
                err.println("relock: '" + view.key() + "' is a Redis " + view.redisType()
                        + " that is not a lock; nothing removed");
                err.flush();
                return Main.NOT_A_LOCK;
            }
            if (!view.locked()) {
                out.println("Nothing to remove: lock '" + name + "' is free.");
                out.flush();
                return Main.FREE;
            }
            String channel = LockReader.channel(view.key(), view.type());
            out.print(Views.text(view));
            out.println("Force-unlock deletes key '" + view.key() + "' whoever holds it and publishes the unlock "
                    + "message on " + (view.type() == LockInfo.Kind.FAIR ? "the next waiter's channel" : channel) + ".");
            out.flush();
            if (!yes && !confirmed(out)) {
                out.println("Not confirmed; nothing removed.");
                out.flush();
                return Main.NOT_CONFIRMED;
            }
            if (!release(session, reader, view)) {
                // relock-core's release checks the data in the script that deletes: it removed
                // nothing, because the lock went meanwhile or the key now holds something else.
                if (reader.inspect(name).type() == LockInfo.Kind.NOT_A_LOCK) {
                    err.println("relock: '" + view.key() + "' no longer holds a lock; nothing removed");
                    err.flush();
                    return Main.NOT_A_LOCK;
                }
                out.println("Nothing removed: lock '" + name + "' was released or changed meanwhile; "
                        + "inspect it again.");
                out.flush();
                return Main.FREE;
            }
            out.println("Removed lock '" + name + "' (" + view.type().label()
                    + (view.mode() == null ? "" : ", mode " + view.mode()) + ", " + view.holders().size()
                    + (view.holders().size() == 1 ? " holder" : " holders") + "): key '" + view.key()
                    + "' deleted, unlock message published.");
            out.flush();
            return Main.OK;
        }
    }

    /** Asks on the terminal, or reads a line from stdin when there is none; only y or yes confirms. */
    private boolean confirmed(PrintWriter out) {
        String question = "Force-unlock '" + name + "'? [y/N] ";
        String answer;
        Console console = System.console();
        if (console != null) {
            answer = console.readLine("%s", question);
        } else {
            out.print(question);
            out.flush();
            try {
                answer = new BufferedReader(new InputStreamReader(System.in, Charset.defaultCharset())).readLine();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the answer from stdin", e);
            }
            out.println();
        }
        String normalized = answer == null ? "" : answer.strip().toLowerCase(Locale.ROOT);
        return normalized.equals("y") || normalized.equals("yes");
    }

    /** relock-core's forceUnlock() of the recognised type; false when there was nothing to release. */
    private boolean release(Session session, LockReader reader, LockView view) {
        Relock relock = session.relock();
        return switch (view.type()) {
            case READ_WRITE -> {
                DistributedReadWriteLock lock = relock.getReadWriteLock(name);
                yield "write".equals(view.mode()) ? lock.writeLock().forceUnlock() : lock.readLock().forceUnlock();
            }
            case FAIR -> releaseFair(session, reader, view);
            case FENCED -> relock.getFencedLock(name).forceUnlock();
            case SIMPLE -> relock.getSimpleLock(name).forceUnlock();
            default -> relock.getLock(name).forceUnlock();
        };
    }

    /**
     * A fair lock: relock-core's release wakes the head of Relock's queue. A fair lock of
     * Redisson's keeps its queue under another key, which relock-core does not read; its head is
     * then told on its own channel here, as Redisson's forceUnlock() does.
     */
    private boolean releaseFair(Session session, LockReader reader, LockView view) {
        boolean relockQueue = session.commands().exists(LockReader.queueKey(view.key())) > 0;
        boolean removed = session.relock().getFairLock(name).forceUnlock();
        if (removed && !relockQueue) {
            String head = reader.redissonQueueHead(view.key());
            if (head != null) {
                String channel = LockReader.fairWaiterChannel(view.key(), head);
                if (session.cluster()) {
                    session.commands().spublish(channel, "0");
                }
                session.commands().publish(channel, "0");
            }
        }
        return removed;
    }
}
