package io.relock.cli;

import io.relock.LockInfo;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code relock inspect NAME}: one lock's state, type, holders, lease, waiters and token. */
@Command(name = "inspect", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Show one lock: held or free, type, holders, lease left, waiters, fencing token.",
        description = {"Show whether a lock is held, its type as recognised from its data (reentrant, "
                + "read-write with its mode, fair with its queue, fenced with its token, simple), its holders "
                + "(client id, thread id, hold count), the lease left and the clients waiting for it.",
            "Works on locks written by Relock and by Redisson."},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:the lock is held",
            "1:an unexpected error (a bug; the stack trace is printed)",
            "2:bad usage",
            "3:the lock is free",
            "5:Redis trouble (unreachable, authentication, TLS, a failed command)",
            "6:the key holds something that is not a lock"})
public final class InspectCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name (without the key prefix)")
    private String name;

    @Option(names = "--json", description = "print one JSON object instead of text")
    private boolean json;

    @Mixin
    private ConnectionOptions connection;

    /** Creates the command; picocli sets its fields. */
    public InspectCommand() {}

    @Override
    public Integer call() {
        if (name.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "NAME must not be empty");
        }
        try (Session session = Session.open(connection.config())) {
            LockView view;
            try {
                view = new LockReader(session).inspect(name);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "NAME: " + e.getMessage());
            }
            PrintWriter out = spec.commandLine().getOut();
            out.print(json ? Json.write(Views.json(view)) + System.lineSeparator() : Views.text(view));
            out.flush();
            if (view.type() == LockInfo.Kind.NOT_A_LOCK) {
                return Main.NOT_A_LOCK;
            }
            return view.locked() ? Main.OK : Main.FREE;
        }
    }
}
