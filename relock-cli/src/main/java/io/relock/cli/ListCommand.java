package io.relock.cli;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.relock.ClientInfo;
import java.io.PrintWriter;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code relock list [PATTERN]}: the held locks among the keys SCAN finds, one line each. */
@Command(name = "list", mixinStandardHelpOptions = true, sortOptions = false,
        header = "List the held locks (SCAN), one line each; --watch refreshes.",
        description = {"List the held locks whose names match PATTERN (a Redis glob, default *), found with SCAN: "
                + "name, type, lease left, and holders with the host and process id of their Relock client. Keys "
                + "that are not locks (as relock-core's getLockInfo judges them) and a lock's own auxiliary keys "
                + "are skipped.",
            "SCAN does not block Redis, but a lock taken or released during the scan may be missed or shown."},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:success, whether or not locks were found",
            "1:an unexpected error (a bug; the stack trace is printed)",
            "2:bad usage",
            "5:Redis trouble (unreachable, authentication, TLS, a failed command)"})
public final class ListCommand implements Callable<Integer> {

    /** Default {@code --limit}. */
    static final int DEFAULT_LIMIT = 10_000;
    /** {@code --watch} without a value: refresh every this many seconds. */
    static final String DEFAULT_WATCH_SECONDS = "2";

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PATTERN", defaultValue = "*",
            description = "glob over lock names, without the key prefix (default: *)")
    private String pattern;

    @Option(names = "--count", paramLabel = "N", defaultValue = "100",
            description = "SCAN's COUNT hint: keys looked at per call (default: ${DEFAULT-VALUE})")
    private int count;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "" + DEFAULT_LIMIT,
            description = "examine at most N keys (and so show at most N locks) per listing (default: ${DEFAULT-VALUE})")
    private int limit;

    @Option(names = "--watch", arity = "0..1", paramLabel = "SECONDS", fallbackValue = DEFAULT_WATCH_SECONDS,
            description = "list again every SECONDS (default " + DEFAULT_WATCH_SECONDS + ") until interrupted (Ctrl-C)")
    private Double watchSeconds;

    @Option(names = "--iterations", paramLabel = "N",
            description = "with --watch: stop after N listings")
    private Integer iterations;

    @Option(names = "--json", description = "print each listing as one JSON object (one line)")
    private boolean json;

    @Mixin
    private ConnectionOptions connection;

    /** Creates the command; picocli sets its fields. */
    public ListCommand() {}

    @Override
    public Integer call() {
        validate();
        try (Session session = Session.open(connection.config())) {
            LockReader reader = new LockReader(session);
            PrintWriter out = spec.commandLine().getOut();
            int rounds = watchSeconds == null ? 1 : iterations == null ? Integer.MAX_VALUE : iterations;
            for (int round = 1; round <= rounds; round++) {
                if (round > 1 && !pause()) {
                    break;
                }
                Listing listing = scan(session, reader);
                out.print(json ? Json.write(json(listing)) + System.lineSeparator() : text(listing, round > 1));
                out.flush();
            }
            return Main.OK;
        }
    }

    private void validate() {
        if (count < 1) {
            throw new ParameterException(spec.commandLine(), "--count must be at least 1, not " + count);
        }
        if (limit < 1) {
            throw new ParameterException(spec.commandLine(), "--limit must be at least 1, not " + limit);
        }
        if (watchSeconds != null && !(watchSeconds > 0 && watchSeconds <= 86_400)) {
            throw new ParameterException(spec.commandLine(), "--watch must be between 0 and 86400 seconds, not "
                    + watchSeconds);
        }
        if (iterations != null && watchSeconds == null) {
            throw new ParameterException(spec.commandLine(), "--iterations needs --watch");
        }
        if (iterations != null && iterations < 1) {
            throw new ParameterException(spec.commandLine(), "--iterations must be at least 1, not " + iterations);
        }
    }

    /** The refresh interval of --watch (a pace for people, not a synchronisation); false when interrupted. */
    private boolean pause() {
        try {
            Thread.sleep(Math.round(watchSeconds * 1000));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** One listing: the locks found and how many keys were examined. */
    private record Listing(List<LockView> locks, int examined, boolean complete) {}

    private Listing scan(Session session, LockReader reader) {
        ScanArgs args = ScanArgs.Builder.matches(glob(session.keyPrefix()) + pattern).limit(count);
        List<LockView> locks = new ArrayList<>();
        Set<String> seen = new HashSet<>(); // SCAN may return a key twice
        int examined = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        boolean truncated = false;
        while (true) {
            KeyScanCursor<String> page = session.commands().scan(cursor, args);
            for (String key : page.getKeys()) {
                if (examined == limit) {
                    truncated = true;
                    break;
                }
                if (!seen.add(key)) {
                    continue;
                }
                examined++;
                String name = reader.nameOf(key);
                if (name == null || name.isEmpty()) {
                    continue;
                }
                LockView view;
                try {
                    view = reader.read(name);
                } catch (IllegalArgumentException e) {
                    continue; // a key no lock can have: not well-formed UTF-16, or braces without a tag in a cluster
                }
                if (view.locked()) {
                    locks.add(view);
                }
            }
            if (truncated || page.isFinished()) {
                break;
            }
            if (examined == limit) {
                truncated = true; // more pages follow
                break;
            }
            cursor = page;
        }
        locks.sort((a, b) -> a.name().compareTo(b.name()));
        return new Listing(locks, examined, !truncated);
    }

    /** The prefix with glob's special characters escaped, so that it matches only itself. */
    private static String glob(String prefix) {
        StringBuilder escaped = new StringBuilder();
        for (char c : prefix.toCharArray()) {
            if ("*?[]\\".indexOf(c) >= 0) {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.toString();
    }

    private String text(Listing listing, boolean again) {
        StringBuilder out = new StringBuilder();
        if (watchSeconds != null) {
            if (again && System.console() != null) {
                out.append("\033[H\033[2J");
            }
            out.append("relock list ").append(pattern).append(" at ")
                    .append(LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")))
                    .append(" (every ").append(watchSeconds).append(" s)").append(System.lineSeparator());
        }
        int nameWidth = Math.max(4, listing.locks().stream().mapToInt(lock -> lock.name().length()).max().orElse(0));
        int typeWidth = Math.max(4, listing.locks().stream().mapToInt(lock -> type(lock).length()).max().orElse(0));
        String row = "%-" + nameWidth + "s  %-" + typeWidth + "s  %-10s  %s%n";
        if (!listing.locks().isEmpty()) {
            out.append(String.format(row, "NAME", "TYPE", "LEASE LEFT", "HOLDERS"));
        }
        for (LockView lock : listing.locks()) {
            out.append(String.format(row, lock.name(), type(lock), Views.lease(lock.leaseMillis()), holders(lock)));
        }
        out.append(listing.locks().size()).append(listing.locks().size() == 1 ? " lock" : " locks")
                .append(" held, ").append(listing.examined()).append(" keys examined");
        if (!listing.complete()) {
            out.append(" (stopped at --limit ").append(limit).append(": there may be more)");
        }
        return out.append(System.lineSeparator()).toString();
    }

    private static String type(LockView lock) {
        return lock.type().label() + (lock.mode() == null ? "" : "/" + lock.mode());
    }

    /** Each holder as {@code <clientId>:<threadId>[ xN] (<host> pid <pid>)}; where its client runs is known for registered Relock clients only. */
    private static String holders(LockView lock) {
        List<String> holders = new ArrayList<>();
        for (LockView.Holder holder : lock.holders()) {
            ClientInfo client = holder.client();
            holders.add(holder.clientId() + ":" + holder.threadId() + (holder.holdCount() == 1 ? "" : " x"
                    + holder.holdCount()) + (client == null ? "" : " (" + client.host()
                            + (client.pid() < 0 ? "" : " pid " + client.pid()) + ")"));
        }
        return String.join(", ", holders);
    }

    private Map<String, Object> json(Listing listing) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("pattern", pattern);
        json.put("examined", listing.examined());
        json.put("complete", listing.complete());
        List<Object> locks = new ArrayList<>();
        for (LockView lock : listing.locks()) {
            locks.add(Views.json(lock));
        }
        json.put("locks", locks);
        return json;
    }
}
