package io.relock.cli;

import io.lettuce.core.RedisException;
import io.relock.RelockException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/**
 * The {@code relock} command: {@code inspect}, {@code list} and {@code force-unlock}. The exit
 * codes are constants of this class and listed by {@code relock --help}.
 */
@Command(name = "relock", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        subcommands = {InspectCommand.class, ListCommand.class, ForceUnlockCommand.class,
            CommandLine.HelpCommand.class},
        description = "Inspect, list and force-unlock Relock and Redisson locks on a Redis.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:success; inspect: the lock is held",
            "1:an unexpected error (a bug; the stack trace is printed)",
            "2:bad usage: an unknown or invalid option or argument",
            "3:inspect: the lock is free; force-unlock: there was nothing to remove",
            "4:force-unlock: not confirmed, nothing removed",
            "5:Redis trouble: unreachable, authentication or TLS failed, a command failed or timed out",
            "6:the key holds something that is not a lock; nothing removed"})
public final class Main implements Runnable {

    /** Success; for {@code inspect}: the lock is held. */
    public static final int OK = 0;
    /** An unexpected error: a bug in the command. */
    public static final int SOFTWARE = 1;
    /** Bad usage: an unknown or invalid option or argument (picocli's usage exit code). */
    public static final int USAGE = 2;
    /** {@code inspect}: the lock is free; {@code force-unlock}: nothing to remove. */
    public static final int FREE = 3;
    /** {@code force-unlock}: the user did not confirm. */
    public static final int NOT_CONFIRMED = 4;
    /** Redis is unreachable, refused the credentials or TLS, or a command failed or timed out. */
    public static final int REDIS_ERROR = 5;
    /** The key exists but is not a lock (another Redis type, or a hash with foreign fields). */
    public static final int NOT_A_LOCK = 6;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command in this JVM and returns its exit code instead of exiting.
     *
     * @param args the command line
     * @return the exit code, one of this class's constants
     */
    public static int run(String... args) {
        CommandLine commandLine = new CommandLine(new Main());
        commandLine.setExecutionExceptionHandler(Main::failed);
        commandLine.setParameterExceptionHandler(Main::misused);
        return commandLine.execute(args);
    }

    /** {@code relock} alone: the usage help, as a usage error. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: inspect, list or force-unlock");
    }

    /** A usage error: the message, the synopsis and where to find more; not the whole help. */
    private static int misused(CommandLine.ParameterException e, String[] args) {
        CommandLine commandLine = e.getCommandLine();
        PrintWriter err = commandLine.getErr();
        err.println("relock: " + e.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        CommandLine.Help help = commandLine.getHelp();
        err.print(help.synopsisHeading() + help.synopsis(help.synopsisHeadingLength()));
        err.println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return USAGE;
    }

    /** Redis trouble gets a one-line message with its causes; anything else is a bug and shows its stack. */
    private static int failed(Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        if (e instanceof RelockException || e instanceof RedisException) {
            err.println("relock: " + describe(e));
            err.flush();
            return REDIS_ERROR;
        }
        err.println("relock: unexpected error (please report it):");
        e.printStackTrace(err);
        err.flush();
        return SOFTWARE;
    }

    /** The exception's message followed by each distinct cause's, as "a: b: c". */
    static String describe(Throwable failure) {
        StringBuilder text = new StringBuilder(String.valueOf(failure.getMessage()));
        for (Throwable cause = failure.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
            if (text.indexOf(message) < 0) {
                text.append(": ").append(message);
            }
        }
        return text.toString();
    }

    /** The version from the executable jar's manifest. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Main.class.getPackage().getImplementationVersion();
            return new String[] {"relock " + (version == null ? "(development build)" : version)};
        }
    }
}
