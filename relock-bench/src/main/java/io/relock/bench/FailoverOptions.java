package io.relock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@link FailoverRun}'s flags; each may be given once.
 *
 * @param failovers failovers per mode, alternating kill and Sentinel failover
 * @param between how long the clients lock on a healthy topology before each failover
 * @param modes the replica-sync modes to measure, in order
 * @param out where the report goes
 */
record FailoverOptions(int failovers, Duration between, Set<FailoverOptions.Mode> modes, Path out) {

    static final String COMMAND = "mvn -q -B -Pfailover -DskipTests verify";

    static final String USAGE = String.join("\n",
            "usage: FailoverRun [flags]   (" + COMMAND + " -Dfailover.args=\"flags\")",
            "  --failovers 20          failovers per mode, alternating kill and Sentinel failover",
            "  --seconds-between 5     seconds of locking on a healthy topology before each failover",
            "  --modes off,sync1,sync2 replica sync off, replicaSync(1, 500ms), replicaSync(2, 500ms)",
            "  --out results           where failover-<yyyy-MM-dd-HHmm>.md goes");

    /**
     * Parses flags; each argument may itself hold several flags separated by spaces (as
     * {@code -Dfailover.args} passes them).
     *
     * @throws IllegalArgumentException naming the flag, for anything not understood; with the
     *     message {@code help} for {@code --help} and {@code -h}
     */
    static FailoverOptions parse(String... args) {
        List<String> words = new ArrayList<>();
        for (String arg : args) {
            for (String word : arg.trim().split("\\s+")) {
                if (!word.isEmpty()) {
                    words.add(word);
                }
            }
        }
        Integer failovers = null;
        Duration between = null;
        Set<Mode> modes = null;
        Path out = null;
        Set<String> seen = new LinkedHashSet<>();
        for (int i = 0; i < words.size(); i++) {
            String flag = words.get(i);
            if (flag.equals("--help") || flag.equals("-h")) {
                throw new IllegalArgumentException("help");
            }
            if (!seen.add(flag)) {
                throw new IllegalArgumentException(flag + " was given twice");
            }
            if (i + 1 >= words.size()) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            String value = words.get(++i);
            switch (flag) {
                case "--failovers" -> failovers = positive(flag, value);
                case "--seconds-between" -> between = Duration.ofSeconds(positive(flag, value));
                case "--modes" -> modes = modes(value);
                case "--out" -> out = Path.of(value);
                default -> throw new IllegalArgumentException("unknown flag " + flag);
            }
        }
        return new FailoverOptions(failovers != null ? failovers : 20, between != null ? between : Duration.ofSeconds(5),
                modes != null ? modes : new LinkedHashSet<>(List.of(Mode.values())),
                out != null ? out : Path.of("results"));
    }

    private static int positive(String flag, String value) {
        int number;
        try {
            number = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a whole number: " + value, e);
        }
        if (number < 1) {
            throw new IllegalArgumentException(flag + " must be at least 1: " + value);
        }
        return number;
    }

    private static Set<Mode> modes(String value) {
        Set<Mode> modes = new LinkedHashSet<>();
        for (String name : value.split(",")) {
            modes.add(Arrays.stream(Mode.values()).filter(m -> m.flag.equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("--modes takes off, sync1 and sync2: "
                            + value)));
        }
        return modes;
    }

    /** Replica sync of the measured clients. */
    enum Mode {
        OFF("off", "replicaSync off", 0),
        SYNC1("sync1", "replicaSync(1, 500ms)", 1),
        SYNC2("sync2", "replicaSync(2, 500ms)", 2);

        final String flag;
        final String label;
        final int replicas;

        Mode(String flag, String label, int replicas) {
            this.flag = flag;
            this.label = label;
            this.replicas = replicas;
        }
    }
}
